// Package statetest holds the helpers that statefile's own tests and the
// reliability module's share: listing what a save left in a directory,
// collecting what a Store reports, and checking a refused or landed save.
package statetest

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
const LongEnv = "OFFMAIN_LONG"

// Long reports whether the long versions were asked for.
func Long() bool { return os.Getenv(LongEnv) == "1" }

// Size returns short, or long when the long versions were asked for.
func Size(short, long int) int {
	if Long() {
		return long
	}
	return short
}

// DirEntries lists the names in dir, sorted.
func DirEntries(t testing.TB, dir string) []string {
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

// TempNames lists the names in dir shaped like the temp files a save of
// base writes (renameio: "." + base + decimal digits), of any file type.
// A missing dir has none.
func TempNames(t testing.TB, dir, base string) []string {
	t.Helper()
	var temps []string
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, name := range DirEntries(t, dir) {
		digits, ok := strings.CutPrefix(name, "."+base)
		if ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
			temps = append(temps, name)
		}
	}
	return temps
}

// CorruptNames lists the names in dir where statefile kept a corrupt base.
func CorruptNames(t testing.TB, dir, base string) []string {
	t.Helper()
	var aside []string
	for _, name := range DirEntries(t, dir) {
		if strings.HasPrefix(name, base+".corrupt-") {
			aside = append(aside, name)
		}
	}
	return aside
}

// ReadBytes reads a file that must exist.
func ReadBytes(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// ErrorLog collects what Options.OnError receives, from any goroutine.
type ErrorLog struct {
	mu  sync.Mutex  // protects got
	got []PathError // since the last drain
}

type PathError struct {
	Path string
	Err  error
}

func NewErrorLog() *ErrorLog { return &ErrorLog{} }

// OnError is an Options.OnError: it notes err with the state file it
// names.
func (l *ErrorLog) OnError(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, PathError{ErrPath(err), err})
}

// ErrPath returns the state file an error of statefile's OnError names:
// the Path of its *statefile.CorruptError, *statefile.VersionError or
// *fs.PathError, or "" for none.
func ErrPath(err error) string {
	var ce *statefile.CorruptError
	var ve *statefile.VersionError
	var pe *fs.PathError
	switch {
	case errors.As(err, &ce):
		return ce.Path
	case errors.As(err, &ve):
		return ve.Path
	case errors.As(err, &pe):
		return pe.Path
	}
	return ""
}

// drain returns what was reported since the last drain. OnError runs
// before the failed save counts as done, so after a Flush it has all.
func (l *ErrorLog) Drain() []PathError {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.got
	l.got = nil
	return got
}

// ExpectRefused runs op (a Save or Remove of f), which f's disk must refuse
// with an error matching want, and checks what the suite promises then:
// the error reaches OnError (log) and Store.Flush, both naming f's path;
// the file keeps the bytes it had and Load still returns its value; and
// no temp file is left beside it.
func ExpectRefused(t *testing.T, s *statefile.Store, f *statefile.File[string], log *ErrorLog, want error, op func() error) {
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
	got := log.Drain()
	if assert.Len(t, got, 1, "OnError calls") {
		assert.Equal(t, path, got[0].Path)
		assert.ErrorIs(t, got[0].Err, want)
	}
	now, nowErr := os.ReadFile(path)
	assert.Equal(t, oldErr == nil, nowErr == nil, "the file exists as before: got %v, had %v", nowErr, oldErr)
	assert.Equal(t, old, now, "the file keeps its bytes")
	if oldErr == nil {
		var want string
		require.NoError(t, json.Unmarshal(old, &want))
		loaded, err := f.Load(context.Background())
		assert.NoError(t, err)
		assert.Equal(t, want, loaded, "Load returns the old value")
	}
	assert.Empty(t, TempNames(t, dir, base), "no temp file left behind")
}

// ExpectSaved saves v through f and checks that it reached the disk.
func ExpectSaved(t *testing.T, s *statefile.Store, f *statefile.File[string], log *ErrorLog, v string) {
	t.Helper()
	require.NoError(t, f.Save(v))
	require.NoError(t, s.Flush(context.Background()))
	assert.Empty(t, log.Drain(), "OnError calls")
	got, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, v, got)
	dir, base := filepath.Split(f.Path())
	assert.Empty(t, TempNames(t, dir, base), "no temp file left behind")
}

// Traces collects a Store's SaveTraces.
type Traces struct {
	mu  sync.Mutex
	all []statefile.SaveTrace
}

func (tr *Traces) Add(t statefile.SaveTrace) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.all = append(tr.all, t)
}

func (tr *Traces) Take() []statefile.SaveTrace {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	all := tr.all
	tr.all = nil
	return all
}

// OpenFull opens dir/state.json in a new Store and saves a first value,
// "the last good save".
func OpenFull(t *testing.T, dir string, d statefile.Durability) (*statefile.Store, *statefile.File[string], *ErrorLog) {
	t.Helper()
	log := NewErrorLog()
	s := statefile.NewStore(statefile.Options{Durability: d, OnError: log.OnError})
	t.Cleanup(func() { s.Close(context.Background()) }) //nolint:errcheck // the test checked each failure
	f, err := statefile.Open[string](s, filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	ExpectSaved(t, s, f, log, "the last good save")
	return s, f, log
}

func SaveOf(f *statefile.File[string], v string) func() error {
	return func() error { return f.Save(v) }
}

func RequireMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, want, st.Mode()&(fs.ModeType|fs.ModePerm), "%s: got %v, want %v", path, st.Mode(), want)
}
