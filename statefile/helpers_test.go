package statefile

import (
	"io/fs"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeDisk replaces a Store's commit and read steps with an in-memory disk
// whose commits can be held on a channel, for tests under testing/synctest
// (which cannot wait on real syscalls).
type fakeDisk struct {
	hold chan struct{} // if non-nil, each commit receives from it first
	// holds maps a path to a channel its commits receive from first (a
	// disk that hangs for that path only); set before the Store writes it.
	holds map[string]chan struct{}

	mu      sync.Mutex        // protects the fields below
	files   map[string][]byte // path -> content
	commits []string          // "path=content" (or "path removed") per commit, in order
	running int               // commits in progress
	maxRun  int               // most commits in progress at once
	fail    error             // returned by every commit while set
}

func newFakeDisk(s *Store, held bool) *fakeDisk {
	d := &fakeDisk{files: make(map[string][]byte)}
	if held {
		d.hold = make(chan struct{})
	}
	s.hooks.commit = d.commit
	s.hooks.readFile = d.readFile
	return d
}

func (d *fakeDisk) commit(path string, data []byte, tr *SaveTrace) error {
	d.mu.Lock()
	d.running++
	d.maxRun = max(d.maxRun, d.running)
	d.mu.Unlock()
	if d.hold != nil {
		<-d.hold
	}
	if h := d.holds[path]; h != nil {
		<-h
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running--
	if d.fail != nil {
		return d.fail
	}
	if data == nil {
		delete(d.files, path)
		d.commits = append(d.commits, path+" removed")
		return nil
	}
	d.files[path] = data
	d.commits = append(d.commits, path+"="+string(data[:len(data)-1]))
	return nil
}

func (d *fakeDisk) readFile(path string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return data, nil
}

func (d *fakeDisk) log() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.commits...)
}

func (d *fakeDisk) content(path string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.files[path]
	return string(data), ok
}

// setDefaultLogger makes l slog's default logger for the test. After it,
// it puts back slog's default and the log package's output and flags:
// slog.SetDefault points log's output at l's handler, and setting the old
// default again does not point it back (log/slog, SetDefault), so a later
// test's log line would land in this test's buffer.
func setDefaultLogger(t *testing.T, l *slog.Logger) {
	old, out, flags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(l)
	t.Cleanup(func() {
		slog.SetDefault(old)
		log.SetOutput(out)
		log.SetFlags(flags)
	})
}

// runningWorkers returns how many writer goroutines the Store runs.
func (s *Store) runningWorkers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.writers)
}

// steps returns how many steps hold a token: at most MaxParallel.
func (s *Store) steps() int { return len(s.sem) }

// readFileT reads a real file or fails the test.
func readFileT(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(data)
}

var errNotExist = fs.ErrNotExist

// fakeVolume is the volume of the absolute paths the fake disks and
// notifiers use: "" on Unix; on Windows the current directory's drive, on
// which Open's filepath.Abs puts a path that starts with a separator.
var fakeVolume = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.VolumeName(wd)
}()

// osPath turns a slash-separated absolute path of a fake disk
// ("/state/a.json") into the one Open makes of it on this system: the same
// on Unix, "C:\state\a.json" on Windows. It does not clean it.
func osPath(slashPath string) string { return fakeVolume + filepath.FromSlash(slashPath) }

// fineClock says whether time.Since measures a single fast file system
// call. Not on Windows: its monotonic clock moves in timer ticks (Go's
// nanotime1 reads INTERRUPT_TIME: runtime/sys_windows_amd64.s), so the
// fsync or the rename of a small file often measures 0 there.
const fineClock = runtime.GOOS != "windows"

// osPerm is the permission bits os.Stat reports for a file (or directory)
// created with perm: perm itself on Unix; on Windows, which keeps no mode
// bits (access is the directory's inherited ACL), what Go's os.Stat shows
// for every directory (0o777) and writable file (0o666: types_windows.go,
// fileStat.Mode).
func osPerm(perm fs.FileMode, dir bool) fs.FileMode {
	switch {
	case runtime.GOOS != "windows":
		return perm
	case dir:
		return 0o777
	}
	return 0o666
}
