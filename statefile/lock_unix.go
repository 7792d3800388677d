//go:build unix && !aix

package statefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openLockFile opens (creating) the lock file. A symlink planted at the
// name makes the open fail rather than have writePID write through it
// (O_NOFOLLOW), and a FIFO does not make it wait (O_NONBLOCK).
func openLockFile(name string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, perm)
}

// tryLock takes an exclusive flock(2) without waiting. flock locks belong
// to the open file description, so a second Store in the same process
// (another open of the file) is refused like another process.
func tryLock(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errHeld
	}
	return err
}

func unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// openTemp opens a temp file to claim it or to test its claim. Should
// something else have replaced it since it was created or listed, the open
// neither follows a symlink (O_NOFOLLOW) nor waits for a FIFO's writer
// (O_NONBLOCK).
func openTemp(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
}
