package statefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/faultfs"
)

// The sweep removes a dead temp file while it still holds the file's claim
// lock. Were it to close (unlocking) first, a writer could claim the file
// between the close and the remove, pass claimTemp's same-file check, and
// then lose its temp file to the remove. A hung close(2) (FUSE_FLUSH runs
// before the kernel drops the flock) holds the sweep at that point.
func TestSweepRemovesUnderItsLock(t *testing.T) {
	fsys := faultfs.MountT(t)
	name := filepath.Join(fsys.Dir(), ".s.json1")
	require.NoError(t, os.WriteFile(name, nil, 0o600)) // a crash's leftover
	h := fsys.Hang(faultfs.Close, nil)                 // every close on the mount: only the sweep's is left
	t.Cleanup(h.Release)
	done := make(chan struct{})
	go func() { removeIfDead(name); close(done) }()
	<-h.Blocked() // the sweep is closing its handle, which ends its lock
	_, err := os.Lstat(name)
	assert.ErrorIs(t, err, fs.ErrNotExist, "got the file still there when the sweep let go of its lock, want it removed")
	h.Release()
	<-done
	assert.NoFileExists(t, name)
}
