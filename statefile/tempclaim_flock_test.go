//go:build unix && !aix

package statefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openNewTemp creates a temp file as a save does, without claiming it.
func openNewTemp(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// holdTemp creates and claims name as a writer does; release lets it go.
func holdTemp(t *testing.T, name string) (release func()) {
	t.Helper()
	f := openNewTemp(t, name)
	claim, err := claimTemp(int(f.Fd()))
	require.NoError(t, err)
	return func() {
		require.NoError(t, unix.Close(claim))
		require.NoError(t, f.Close()) // the lock goes with the open file's last descriptor
	}
}

// claimTemp fails with errSwept in each way a sweep can take the temp file
// between its creation and the claim, so the save makes a new one.
// (Windows has no claim step: the creating handle holds the file.)
func TestClaimTempSeesSweep(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		sweep func(t *testing.T, name string)
	}{
		{"removed before the claim", func(t *testing.T, name string) { require.NoError(t, os.Remove(name)) }},
		{"sweep holds it", func(t *testing.T, name string) {
			f, err := os.Open(name)
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			require.NoError(t, tryLock(f))
		}},
		{"replaced by another file", func(t *testing.T, name string) {
			require.NoError(t, os.Remove(name))
			openNewTemp(t, name)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(dir, ".s.json"+tc.name[:3])
			f := openNewTemp(t, name)
			tc.sweep(t, name)
			_, err := claimTemp(int(f.Fd()))
			assert.ErrorIs(t, err, errSwept)
		})
	}
}
