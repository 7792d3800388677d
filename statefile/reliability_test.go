package statefile_test

// Helpers shared by the reliability suite (RELIABILITY.md): the
// crash, disk-full, read-only, faulty-disk, fuzz, load and security tests
// of this package.

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// longEnv names the environment variable that runs the long versions of
// the reliability suite: OFFMAIN_LONG=1 go test ./statefile/.
const longEnv = "OFFMAIN_LONG"

// longSuite reports whether the long versions were asked for.
func longSuite() bool { return os.Getenv(longEnv) == "1" }

// suiteSize returns short, or long when the long versions were asked for.
func suiteSize(short, long int) int {
	if longSuite() {
		return long
	}
	return short
}

// dirEntries lists the names in dir, sorted.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// tempNames lists the names in dir shaped like the temp files a save of
// base writes (renameio: "." + base + decimal digits), of any file type.
// A missing dir has none.
func tempNames(t testing.TB, dir, base string) []string {
	t.Helper()
	var temps []string
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, name := range dirEntries(t, dir) {
		digits, ok := strings.CutPrefix(name, "."+base)
		if ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
			temps = append(temps, name)
		}
	}
	return temps
}

// corruptNames lists the names in dir where statefile kept a corrupt base.
func corruptNames(t testing.TB, dir, base string) []string {
	t.Helper()
	var aside []string
	for _, name := range dirEntries(t, dir) {
		if strings.HasPrefix(name, base+statefile.CorruptSuffix) {
			aside = append(aside, name)
		}
	}
	return aside
}

// readBytes reads a file that must exist.
func readBytes(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// errorLog collects what Options.OnError receives, from any goroutine.
type errorLog struct {
	mu  sync.Mutex  // protects got
	got []pathError // since the last drain
}

type pathError struct {
	path string
	err  error
}

func newErrorLog() *errorLog { return &errorLog{} }

func (l *errorLog) onError(path string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, pathError{path, err})
}

// drain returns what was reported since the last drain. OnError runs
// before the failed save counts as done, so after a Flush it has all.
func (l *errorLog) drain() []pathError {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

// expectRefused runs op (a Save or Remove of f), which f's disk must refuse
// with an error matching want, and checks what the suite promises then:
// the error reaches OnError (log) and Store.Flush, both naming f's path;
// the file keeps the bytes it had and Load still returns its value; and
// no temp file is left beside it.
func expectRefused(t *testing.T, s *statefile.Store, f *statefile.File[string], log *errorLog, want error, op func() error) {
	t.Helper()
	path := f.Path()
	dir, base := filepath.Split(path)
	old, oldErr := os.ReadFile(path)
	require.NoError(t, op(), "Save and Remove report no disk error")
	err := s.Flush(context.Background())
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, err, &nd, "Flush: got %v, want a *NotDrainedError", err)
	assert.Empty(t, nd.Pending)
	assert.ErrorIs(t, nd.Failed[path], want, "Flush: got %v for %s, want %v", nd.Failed, path, want)
	got := log.drain()
	if assert.Len(t, got, 1, "OnError calls") {
		assert.Equal(t, path, got[0].path)
		assert.ErrorIs(t, got[0].err, want)
	}
	now, nowErr := os.ReadFile(path)
	assert.Equal(t, oldErr == nil, nowErr == nil, "the file exists as before: got %v, had %v", nowErr, oldErr)
	assert.Equal(t, old, now, "the file keeps its bytes")
	if oldErr == nil {
		var want string
		require.NoError(t, json.Unmarshal(old, &want))
		loaded, err := f.Load()
		assert.NoError(t, err)
		assert.Equal(t, want, loaded, "Load returns the old value")
	}
	assert.Empty(t, tempNames(t, dir, base), "no temp file left behind")
}

// expectSaved saves v through f and checks that it reached the disk.
func expectSaved(t *testing.T, s *statefile.Store, f *statefile.File[string], log *errorLog, v string) {
	t.Helper()
	require.NoError(t, f.Save(v))
	require.NoError(t, s.Flush(context.Background()))
	assert.Empty(t, log.drain(), "OnError calls")
	got, err := f.Load()
	require.NoError(t, err)
	assert.Equal(t, v, got)
	dir, base := filepath.Split(f.Path())
	assert.Empty(t, tempNames(t, dir, base), "no temp file left behind")
}
