package statefile

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A second Store's first-Open sweep runs when a save has written its temp
// file and is about to rename (on Windows: MoveFileEx) it over the path.
// The sweep must leave the temp file alone, and the save must land. On
// Windows a writer used to close its temp file before the move, so that
// sweep deleted it and the move failed with "The system cannot find the
// file specified".
func TestSweepBeforeRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	var fails atomic.Int32
	writer := NewStore(Options{OnError: func(err error) { fails.Add(1); t.Logf("save failed: %v", err) }})
	renames := 0
	writer.hooks.beforeRename = func(name string) {
		renames++
		NewStore(Options{}).sweepTemps(path) // another Store's first-Open sweep: it lists the directory now, temp file included
		assert.FileExists(t, name, "the sweep took a temp file a live save was about to rename")
	}
	f, err := Open[int](writer, path)
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		require.NoError(t, f.Save(i))
		assert.NoError(t, f.Flush(context.Background()), "save %d", i)
	}
	assert.Equal(t, 3, renames, "renames: got %d, want one per save", renames)
	assert.Zero(t, fails.Load(), "failed saves")
	require.NoError(t, writer.Close(context.Background()))
	assert.Equal(t, "3\n", readFileT(t, path))
	assert.Equal(t, []string{"s.json"}, dirNames(t, dir), "no temp file left")
}
