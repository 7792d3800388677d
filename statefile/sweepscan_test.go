package statefile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A thousand paths opened in one directory cost one read of it, and each
// path's leftovers are still swept.
func TestSweepScansDirectoryOnce(t *testing.T) {
	dir := t.TempDir()
	const paths = 1000
	for _, i := range []int{0, 500, 999} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf(".p%d.json42", i)), nil, 0o600))
	}
	s := NewStore(Options{})
	var scans atomic.Int32
	s.hooks.readDir = func(d string) ([]os.DirEntry, error) {
		scans.Add(1)
		return os.ReadDir(d)
	}
	files := make([]*File[int], paths)
	for i := range paths {
		var err error
		files[i], err = Open[int](s, filepath.Join(dir, fmt.Sprintf("p%d.json", i)))
		require.NoError(t, err)
	}
	for _, f := range files {
		_, err := f.Load(context.Background()) // runs after the path's sweep
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	require.NoError(t, s.Close(context.Background()))
	assert.Equal(t, int32(1), scans.Load(), "reads of the directory: got, want 1")
	assert.Empty(t, dirNames(t, dir), "leftovers not swept")
}

// The sweep for "state" takes only names of renameio's exact shape for
// "state", and leaves a sibling's: ".state1123" is the temp file of
// "state1" when that file is there. So is ".state123" (".state1" + "23"):
// the shape cannot tell, and the sweep leaves what may be another's.
func TestSweepExactShape(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"state", "state1",
		".state123",                  // state's: swept
		".state0",                    // state's (rand.Int64 may be 0): swept
		".state1123",                 // state1's (it exists): kept
		".state0123",                 // a leading zero: not renameio's, kept
		".state12345678901234567890", // 20 digits: kept
		".state9223372036854775808",  // > MaxInt64: kept
		".state-1",                   // a sign: kept
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("1"), 0o600))
	}
	s := NewStore(Options{})
	f, err := Open[int](s, filepath.Join(dir, "state"))
	require.NoError(t, err)
	_, err = f.Load(context.Background()) // runs after the path's sweep
	require.NoError(t, err)
	require.NoError(t, s.Close(context.Background()))
	assert.Equal(t, []string{".state-1", ".state0123", ".state1123", ".state123", ".state12345678901234567890", ".state9223372036854775808", "state", "state1"},
		dirNames(t, dir), "files left: got, want")
}
