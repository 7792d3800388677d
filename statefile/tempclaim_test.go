package statefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sweep opens path in a new Store and waits for its first-Open sweep.
func sweep(t *testing.T, path string) {
	t.Helper()
	f, err := Open[string](NewStore(Options{}), path)
	require.NoError(t, err)
	f.Load() //nolint:errcheck // runs behind the sweep; the file may not exist
}

// createTemp makes a temp file as a save does, without claiming it.
func createTemp(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// A claimed temp file survives a sweep; an unclaimed one does not, and a
// released claim frees it.
func TestSweepSparesClaimedTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	live := filepath.Join(dir, ".s.json1")
	dead := filepath.Join(dir, ".s.json2")
	claim, err := claimTemp(live, createTemp(t, live))
	require.NoError(t, err)
	createTemp(t, dead)
	sweep(t, path)
	assert.FileExists(t, live)
	assert.NoFileExists(t, dead)
	require.NoError(t, claim.Close())
	sweep(t, path)
	assert.NoFileExists(t, live)
}

// claimTemp fails with errSwept in each way a sweep can take the temp file
// between its creation and the claim, so the save makes a new one.
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
			createTemp(t, name)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(dir, ".s.json"+tc.name[:3])
			f := createTemp(t, name)
			tc.sweep(t, name)
			_, err := claimTemp(name, f)
			assert.ErrorIs(t, err, errSwept)
		})
	}
}
