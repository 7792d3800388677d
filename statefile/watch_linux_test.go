package statefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Watches on a real directory with fsnotify (inotify). Each test ends its
// wait for "nothing more" with a sentinel: a last external change that must
// be the next report, so a duplicate or an echo before it fails the test.

// reports is a watch's fn that queues what it is given.
type reports chan string

func (r reports) fn(v string, err error) {
	if err != nil {
		v = "error: " + err.Error()
	}
	r <- v
}

// next returns the next report.
func (r reports) next(t *testing.T) string {
	t.Helper()
	timer := time.NewTimer(lineWait)
	defer timer.Stop()
	select {
	case v := <-r:
		return v
	case <-timer.C:
		t.Fatalf("no report in %v", lineWait)
		return ""
	}
}

// editorReplace saves content at path as editors do: write a temp file
// beside it, then rename it over.
func editorReplace(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// rewriteInPlace truncates path and writes content in pieces, one write
// each, as a program that saves in place does.
func rewriteInPlace(t *testing.T, path string, pieces ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	for _, p := range pieces {
		_, err = f.WriteString(p)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

// awaitRead waits for a read whose error matches want.
func awaitRead(t *testing.T, reads <-chan error, want error) {
	t.Helper()
	timer := time.NewTimer(lineWait)
	defer timer.Stop()
	for {
		select {
		case err := <-reads:
			if errors.Is(err, want) {
				return
			}
		case <-timer.C:
			t.Fatalf("no read failing with %v in %v", want, lineWait)
		}
	}
}

func watchReports(t *testing.T, f *File[string]) (reports, func()) {
	t.Helper()
	r := make(reports, 16)
	stop, err := f.Watch(r.fn)
	require.NoError(t, err)
	return r, stop
}

// An editor's replace and an in-place rewrite are each reported once, with
// the final content (never the truncated file in between); a file that
// does not parse is reported as corrupt and left in place, and Load's move
// aside is not reported.
func TestWatchSeesEditorsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := NewStore(Options{})
	reads := make(chan error, 1024) // the result of each read of the file by the Store
	s.hooks.readFile = func(p string) ([]byte, error) {
		data, err := os.ReadFile(p)
		reads <- err
		return data, err
	}
	f, err := Open[string](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save("start"))
	require.NoError(t, f.Flush(context.Background()))
	r, stop := watchReports(t, f)
	defer stop()

	editorReplace(t, path, "\"edited\"\n")
	assert.Equal(t, "edited", r.next(t))
	rewriteInPlace(t, path, `"rewr`, `itten"`, "\n")
	assert.Equal(t, "rewritten", r.next(t), "one report, after the last piece")
	editorReplace(t, path, "{not json")
	corrupt := r.next(t)
	assert.True(t, strings.HasPrefix(corrupt, "error: statefile: corrupt file "+path+" left in place: "), corrupt)
	_, err = f.Load(context.Background())
	var ce *CorruptError
	require.ErrorAs(t, err, &ce, "Load moves the corrupt file aside")
	assert.NotEmpty(t, ce.Aside)
	awaitRead(t, reads, fs.ErrNotExist) // the check that follows the move aside finds no file
	editorReplace(t, path, "\"sentinel\"\n")
	assert.Equal(t, "sentinel", r.next(t), "nothing between the corrupt file and the sentinel")

	v, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "sentinel", v, "Load sees the external change")
	require.NoError(t, f.Save("mine"))
	require.NoError(t, s.Close(context.Background()))
	assert.Equal(t, "\"mine\"\n", readFileT(t, path), "the next own save wins")
	assert.Empty(t, r, "reports after the sentinel")
}

// Many own saves and removes, flushed or not, are never reported. Before
// the sentinel the test waits for a check that reads the Store's own last
// save (a touch of the file guarantees one): were own saves echoed, that
// check would report one.
func TestWatchOwnSavesNotEchoedOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "own.json")
	s := NewStore(Options{Durability: Atomic})
	checked := make(chan struct{}, 1)
	s.hooks.readFile = func(p string) ([]byte, error) {
		select {
		case checked <- struct{}{}:
		default:
		}
		return os.ReadFile(p)
	}
	f, err := Open[string](s, path)
	require.NoError(t, err)
	r, stop := watchReports(t, f)
	defer stop()
	for i := range 300 {
		require.NoError(t, f.Save(fmt.Sprint("own ", i)))
		switch i % 10 {
		case 3:
			require.NoError(t, f.Flush(context.Background()))
		case 7:
			require.NoError(t, f.Remove())
		}
	}
	require.NoError(t, f.Flush(context.Background()))
	awaitCheck(t, checked, path)
	editorReplace(t, path, "\"sentinel\"\n")
	assert.Equal(t, "sentinel", r.next(t), "an own save was reported before the sentinel")
	require.NoError(t, s.Close(context.Background()))
}

// awaitCheck touches path (an event, not a change) and waits for a read
// of it that started after the call: a check.
func awaitCheck(t *testing.T, checked chan struct{}, path string) {
	t.Helper()
	select {
	case <-checked: // a read that may have started before the call
	default:
	}
	now := time.Now()
	require.NoError(t, os.Chtimes(path, now, now))
	timer := time.NewTimer(lineWait)
	defer timer.Stop()
	select {
	case <-checked:
	case <-timer.C:
		t.Fatalf("no check within %v of an event", lineWait)
	}
}

// stop ends every goroutine the watch started: the fsnotify reader, the
// settle loop and the delivery goroutine.
func TestWatchStopLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	dir := t.TempDir()
	s := NewStore(Options{})
	a, _ := Open[string](s, filepath.Join(dir, "a.json"))
	b, _ := Open[string](s, filepath.Join(dir, "sub", "b.json")) // its directory does not exist yet
	ra, stopA := watchReports(t, a)
	rb, stopB := watchReports(t, b)
	assert.DirExists(t, filepath.Join(dir, "sub"), "Watch creates the missing directory")
	editorReplace(t, a.Path(), "\"x\"\n")
	editorReplace(t, b.Path(), "\"y\"\n")
	assert.Equal(t, "x", ra.next(t))
	assert.Equal(t, "y", rb.next(t))
	stopA()
	stopB()
	goleak.VerifyNone(t, before)
	_, err := a.Load(context.Background())
	require.NoError(t, err)
	require.NoError(t, s.Close(context.Background()))
}

// Two processes over one file: A saves, B's watch reports A's
// value; B saves, A's watch reports B's; neither reports its own saves;
// the file ends as the last save left it. Then a third party's change
// reaches both, and is the next report of each: no echo came before it.
func TestWatchTwoProcesses(t *testing.T) {
	if os.Getenv(childRoleEnv) == "watch" {
		watchChild(t, os.Getenv(childPathEnv))
		return
	}
	path := filepath.Join(t.TempDir(), "shared.json")
	b := startProc(t, "TestWatchTwoProcesses", "watch", path)
	b.expect("ready")
	s := NewStore(Options{})
	a, err := Open[string](s, path)
	require.NoError(t, err)
	r, stop := watchReports(t, a)
	for round := 1; round <= 3; round++ {
		require.NoError(t, a.Save(fmt.Sprint("A", round)))
		require.NoError(t, a.Flush(context.Background()))
		b.expect(fmt.Sprint("seen A", round))
		b.send(fmt.Sprint("save B", round))
		b.expect(fmt.Sprint("saved B", round))
		assert.Equal(t, fmt.Sprint("B", round), r.next(t))
	}
	assert.Equal(t, "\"B3\"\n", readFileT(t, path), "the last save")
	editorReplace(t, path, "\"C\"\n")
	b.expect("seen C")
	assert.Equal(t, "C", r.next(t))
	b.exit()
	stop()
	require.NoError(t, s.Close(context.Background()))
	assert.Empty(t, r)
}

// watchChild is process B: it reports what its watch sees ("seen v"),
// saves what it is told ("save v" -> "saved v", after the flush) and ends
// at the end of its stdin ("bye").
func watchChild(t *testing.T, path string) {
	var out childOut
	s := NewStore(Options{})
	f, err := Open[string](s, path)
	require.NoError(t, err)
	stop, err := f.Watch(func(v string, err error) {
		if err != nil {
			v = "error: " + err.Error()
		}
		out.say("seen %s", v)
	})
	require.NoError(t, err)
	out.say("ready")
	for in := commands(); in.Scan(); {
		v, ok := strings.CutPrefix(in.Text(), "save ")
		require.True(t, ok, "command %q", in.Text())
		require.NoError(t, f.Save(v))
		require.NoError(t, f.Flush(context.Background()))
		out.say("saved %s", v)
	}
	stop()
	require.NoError(t, s.Close(context.Background()))
	out.say("bye")
}

// A watched directory that is removed or renamed takes its inotify watch
// with it (IN_DELETE_SELF, IN_MOVE_SELF). The watch reports the file gone,
// then sees the directory again once something makes it: another program,
// or the Store's own next save (which is still not echoed).
func TestWatchDirectoryRemovedOrRenamed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "state")
	path := filepath.Join(dir, "s.json")
	s := NewStore(Options{})
	defer s.Close(context.Background())
	f, err := Open[string](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save("start"))
	require.NoError(t, f.Flush(context.Background()))
	r, stop := watchReports(t, f)
	defer stop()
	gone := "error: open " + path + ": no such file or directory"

	require.NoError(t, os.RemoveAll(dir))
	assert.Equal(t, gone, r.next(t), "removed with its directory")
	require.NoError(t, os.Mkdir(dir, 0o700))
	editorReplace(t, path, "\"after remove\"\n")
	assert.Equal(t, "after remove", r.next(t), "a new directory at the name is watched")

	require.NoError(t, os.Rename(dir, filepath.Join(base, "state.old")))
	assert.Equal(t, gone, r.next(t), "renamed away with its directory")
	require.NoError(t, os.Mkdir(dir, 0o700))
	editorReplace(t, path, "\"after rename\"\n")
	assert.Equal(t, "after rename", r.next(t))
	editorReplace(t, filepath.Join(base, "state.old", "s.json"), "\"old dir\"\n")

	require.NoError(t, os.RemoveAll(dir))
	assert.Equal(t, gone, r.next(t))
	require.NoError(t, f.Save("mine")) // makes the directory again
	require.NoError(t, f.Flush(context.Background()))
	editorReplace(t, path, "\"sentinel\"\n")
	assert.Equal(t, "sentinel", r.next(t), "no echo of the own save, nothing from the old directory, before the sentinel")
	assert.Empty(t, r, "reports after the sentinel")
}

// Directory churn under a watched parent: the state directory is moved away
// and deleted over and over (fsnotify then sends errors for watches it
// cannot remove, holding the lock its Add takes). Both watches keep
// working, and Close returns.
func TestWatchDirectoryChurn(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "state")
	trash := filepath.Join(t.TempDir(), "trash")
	s := NewStore(Options{})
	top, err := Open[string](s, filepath.Join(base, "x.json"))
	require.NoError(t, err)
	f, err := Open[string](s, filepath.Join(dir, "s.json"))
	require.NoError(t, err)
	rTop, _ := watchReports(t, top)
	rState := make(reports, 1)
	_, err = f.Watch(func(v string, err error) {
		if err == nil && v == "sentinel" {
			select {
			case rState <- v:
			default: // never block the watch: Close waits for fn
			}
		}
	})
	require.NoError(t, err)
	for i := range 50 {
		require.NoError(t, os.MkdirAll(dir, 0o700))
		editorReplace(t, filepath.Join(dir, "s.json"), fmt.Sprintf("\"%d\"\n", i))
		require.NoError(t, os.Rename(dir, trash))
		require.NoError(t, os.RemoveAll(trash))
	}
	require.NoError(t, os.MkdirAll(dir, 0o700))
	editorReplace(t, filepath.Join(dir, "s.json"), "\"sentinel\"\n")
	assert.Equal(t, "sentinel", rState.next(t), "the watch in the churned directory")
	editorReplace(t, filepath.Join(base, "x.json"), "\"sentinel\"\n")
	for v := rTop.next(t); v != "sentinel"; v = rTop.next(t) {
	}

	// A deadlock would hang Close (and the watches' stop) rather than fail
	// it: give it a goroutine and a deadline.
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		closed <- s.Close(ctx)
	}()
	timer := time.NewTimer(lineWait)
	defer timer.Stop()
	select {
	case err := <-closed:
		assert.NoError(t, err, "Close after the churn")
	case <-timer.C:
		t.Fatalf("Close did not return in %v after the churn", lineWait)
	}
}
