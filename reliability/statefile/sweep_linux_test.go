package statefile_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/statefile"
)

// The sweep removes a dead temp file while it still holds the file's claim
// lock. Were it to close (unlocking) first, a writer could claim the file
// between the close and the remove, pass the claim's same-file check, and
// then lose its temp file to the remove. A hung close(2) (FUSE_FLUSH runs
// before the kernel drops the flock) holds the sweep at that point.
func TestSweepRemovesUnderItsLock(t *testing.T) {
	fsys := faultfs.MountT(t)
	name := filepath.Join(fsys.Dir(), ".s.json1")
	require.NoError(t, os.WriteFile(name, nil, 0o600)) // a crash's leftover
	h := fsys.Hang(faultfs.Close, nil)                 // every close(2) on the mount: only the sweep's of the leftover comes (a removed file's node has no name to match)
	t.Cleanup(h.Release)
	s := statefile.NewStore(statefile.Options{})
	t.Cleanup(func() { s.Close(context.Background()) })                      //nolint:errcheck // checked below
	_, err := statefile.Open[string](s, filepath.Join(fsys.Dir(), "s.json")) // queues the sweep
	require.NoError(t, err)
	select {
	case <-h.Blocked(): // the sweep is closing its handle, which ends its lock
	case <-time.After(10 * time.Second):
		t.Fatal("the sweep never closed the leftover's handle")
	}
	_, err = os.Lstat(name)
	assert.ErrorIs(t, err, fs.ErrNotExist, "got the file still there when the sweep let go of its lock, want it removed")
	h.Release()
	require.NoError(t, s.Close(context.Background()))
	assert.NoFileExists(t, name)
}
