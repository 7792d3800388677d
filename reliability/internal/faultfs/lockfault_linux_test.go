package faultfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/reliability/internal/faultfs"
)

// On a MountLocksT mount flock works and excludes like on the backing
// filesystem, a Lock fault makes flock(2) return its errno, and clearing
// it restores locking.
func TestLockFault(t *testing.T) {
	fsys := faultfs.MountLocksT(t)
	p := filepath.Join(fsys.Dir(), "a.json")
	require.NoError(t, os.WriteFile(p, []byte("{}"), 0o600))
	open := func() *os.File {
		f, err := os.Open(p)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	require.NoError(t, unix.Flock(int(a.Fd()), unix.LOCK_EX|unix.LOCK_NB), "flock without a fault")
	assert.ErrorIs(t, unix.Flock(int(b.Fd()), unix.LOCK_EX|unix.LOCK_NB), unix.EWOULDBLOCK, "a second open's flock while held")
	require.NoError(t, unix.Flock(int(a.Fd()), unix.LOCK_UN))

	for _, errno := range []syscall.Errno{syscall.ENOLCK, syscall.EOPNOTSUPP} {
		clear := fsys.Fail(faultfs.Lock, errno, faultfs.Base("a.json"))
		assert.ErrorIs(t, unix.Flock(int(b.Fd()), unix.LOCK_EX|unix.LOCK_NB), errno, "flock under Fail(Lock, %v)", errno)
		clear()
	}
	assert.NoError(t, unix.Flock(int(b.Fd()), unix.LOCK_EX|unix.LOCK_NB), "flock after the fault cleared")
}
