package statefile

import (
	"context"
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
	f.Load(context.Background()) //nolint:errcheck // runs behind the sweep; the file may not exist
}

// deadTemp makes a temp file as a writer that crashed leaves it: created,
// written, closed, never renamed.
func deadTemp(t *testing.T, name string) {
	t.Helper()
	require.NoError(t, os.WriteFile(name, []byte("partial"), 0o600))
}

// A live writer's temp file survives a sweep; a dead one does not, and one
// its writer let go of is swept next time. holdTemp holds a temp file as a
// live writer does on this system (tempclaim.go, tempclaim_windows.go).
func TestSweepSparesClaimedTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	live := filepath.Join(dir, ".s.json1")
	dead := filepath.Join(dir, ".s.json2")
	release := holdTemp(t, live)
	deadTemp(t, dead)
	sweep(t, path)
	assert.FileExists(t, live, "a live writer's temp file")
	assert.NoFileExists(t, dead, "a dead writer's temp file")
	release()
	sweep(t, path)
	assert.NoFileExists(t, live, "a temp file its writer let go of")
}
