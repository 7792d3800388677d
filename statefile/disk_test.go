package statefile

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type doc struct {
	Text string            `json:"text"`
	Tags map[string]string `json:"tags,omitempty"`
}

func flushT(t *testing.T, f interface{ Flush(context.Context) error }) {
	t.Helper()
	require.NoError(t, f.Flush(context.Background()))
}

// Point 8: a save creates the missing parent directories (0o700) and the
// file (0o600 by default), with the JSON of the value.
func TestSaveCreatesDirsAndFile(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "state.json")
	s := NewStore(Options{})
	f, err := Open[doc](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save(doc{Text: "hello"}))
	flushT(t, f)
	assert.Equal(t, "{\"text\":\"hello\"}\n", readFileT(t, path))
	for _, p := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b")} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, osPerm(0o700, true), st.Mode().Perm(), p)
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, osPerm(0o600, false), st.Mode().Perm())
	got, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, doc{Text: "hello"}, got)
}

// Point 4: on a real disk, Remove deletes the file and a missing file
// (or a missing directory) is not an error.
func TestRemoveOnDisk(t *testing.T) {
	root := t.TempDir()
	s := NewStore(Options{})
	f, err := Open[string](s, filepath.Join(root, "r.json"))
	require.NoError(t, err)
	require.NoError(t, f.Save("x"))
	require.NoError(t, f.Remove())
	flushT(t, f)
	assert.NoFileExists(t, f.Path())
	require.NoError(t, f.Remove())
	assert.NoError(t, f.Flush(context.Background()), "Remove of a missing file")
	g, err := Open[string](s, filepath.Join(root, "no", "such", "dir.json"))
	require.NoError(t, err)
	require.NoError(t, g.Remove())
	assert.NoError(t, g.Flush(context.Background()), "Remove in a missing directory")
	require.NoError(t, s.Close(context.Background()))
}

// Point 8: Options.Perm is honoured, and Atomic durability skips the fsyncs
// but still replaces the file whole.
func TestAtomicDurabilitySkipsFsync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	var traces []SaveTrace
	s := NewStore(Options{Durability: Atomic, Perm: 0o640, MaxParallel: 1, Trace: func(tr SaveTrace) { traces = append(traces, tr) }})
	f, _ := Open[string](s, path)
	f.Save("one")
	flushT(t, f)
	f.Save("two")
	flushT(t, f)
	require.Len(t, traces, 2)
	for _, tr := range traces {
		assert.Zero(t, tr.Sync)
		assert.Zero(t, tr.DirSync)
		if fineClock {
			assert.Positive(t, tr.Rename)
		}
	}
	assert.Equal(t, "\"two\"\n", readFileT(t, path))
	st, _ := os.Stat(path)
	assert.Equal(t, osPerm(0o640, false), st.Mode().Perm())
	assert.Equal(t, []string{"state.json"}, dirNames(t, filepath.Dir(path)), "no temp file left")
}

// Point 8: temp files an earlier crash left are swept at the first Open of
// the path; other files stay.
func TestSweepAtFirstOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	for _, name := range []string{".s.json123", ".s.json9876543210", ".s.jsonx1", "s.json.corrupt-20260101T000000Z", ".other.json42", "s.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("\"old\"\n"), 0o600))
	}
	s := NewStore(Options{})
	f, _ := Open[string](s, path)
	flushT(t, s)
	got, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "old", got)
	assert.Equal(t, []string{".other.json42", ".s.jsonx1", "s.json", "s.json.corrupt-20260101T000000Z"}, dirNames(t, dir))
}

// Point 6: a file that does not parse is renamed aside, not deleted, and
// Load returns the zero value with ErrCorrupt.
func TestLoadQuarantinesCorruptFile(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"garbage", "{not json"},
		{"empty", ""},
		{"wrong type", "\"a string\"\n"},
		{"truncated", "{\"text\":\"hel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			s := NewStore(Options{})
			f, _ := Open[doc](s, path)
			v, err := f.Load(context.Background())
			assert.Equal(t, doc{}, v)
			require.ErrorIs(t, err, ErrCorrupt)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			assert.True(t, strings.HasPrefix(filepath.Base(ce.Aside), "c.json"+corruptSuffix), ce.Aside)
			assert.Equal(t, tc.content, readFileT(t, ce.Aside), "the bad bytes are kept")
			_, err = os.Stat(path)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			f.Save(doc{Text: "fresh"})
			got, err := f.Load(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "fresh", got.Text)
		})
	}
}

// Point 8 and security: a symlink planted at the final name is replaced,
// not followed; its target is untouched.
func TestSymlinkAtFinalNameNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
	path := filepath.Join(dir, "state.json")
	require.NoError(t, os.Symlink(victim, path))
	s := NewStore(Options{})
	f, _ := Open[string](s, path)
	f.Save("mine")
	flushT(t, f)
	assert.Equal(t, "keep", readFileT(t, victim))
	st, err := os.Lstat(path)
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular(), "the symlink was replaced by a regular file")
}

// A disk error (here: the directory is a file) goes to OnError and the
// next Flush, with the path in the error.
func TestDiskErrorReported(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "notadir")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	var mu sync.Mutex
	var failed []string
	s := NewStore(Options{OnError: func(err error) {
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe, "OnError's error names the state file")
		mu.Lock()
		failed = append(failed, pe.Path)
		mu.Unlock()
	}})
	path := filepath.Join(blocker, "state.json")
	f, _ := Open[int](s, path)
	f.Save(1)
	err := s.Flush(context.Background())
	var nd *NotDrainedError
	require.ErrorAs(t, err, &nd)
	assert.Contains(t, nd.Failed, path)
	assert.Equal(t, []string{path}, failed)
}

// Point 14: many goroutines saving, removing, loading and flushing across
// paths; each file ends with its path's last save (run under -race).
func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(Options{Durability: Atomic})
	const paths, goroutines, saves = 8, 16, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			f, err := Open[map[string]int](s, filepath.Join(dir, fmt.Sprintf("p%d.json", g%paths)))
			if !assert.NoError(t, err) {
				return
			}
			for i := range saves {
				switch i % 50 {
				case 10:
					f.Remove()
				case 20:
					f.Load(context.Background()) //nolint:errcheck // racing with removes
				case 30:
					f.Flush(context.Background()) //nolint:errcheck
				default:
					f.Save(map[string]int{"g": g, "i": i})
				}
			}
		})
	}
	wg.Wait()
	for p := range paths {
		f, _ := Open[map[string]int](s, filepath.Join(dir, fmt.Sprintf("p%d.json", p)))
		f.Save(map[string]int{"final": p})
	}
	require.NoError(t, s.Close(context.Background()))
	for p := range paths {
		assert.Equal(t, fmt.Sprintf("{\"final\":%d}\n", p), readFileT(t, filepath.Join(dir, fmt.Sprintf("p%d.json", p))))
	}
	assert.Len(t, dirNames(t, dir), paths, "no temp files left")
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
