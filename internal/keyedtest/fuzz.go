package keyedtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// KeptAside checks that a store's read reported a corrupt file (err
// matches statefile.ErrCorrupt) and that statefile moved its bytes, data,
// aside unchanged.
func KeptAside(t *testing.T, data []byte, err error) {
	t.Helper()
	require.ErrorIs(t, err, statefile.ErrCorrupt, "got %v, want ErrCorrupt", err)
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Aside, "the bytes were not moved aside: %v", ce.Err)
	got, rerr := os.ReadFile(ce.Aside)
	require.NoError(t, rerr)
	assert.Equal(t, data, got, "the bytes kept aside, byte for byte")
}

// RemoveAll removes path and the copies of it kept aside, so that a fuzz
// target can reuse one directory for every input (a directory per input is
// slow on ext4).
func RemoveAll(t *testing.T, path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == base || strings.HasPrefix(e.Name(), base+".corrupt-") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Error(err)
			}
		}
	}
}
