//go:build unix && !aix

package statefile

import (
	"errors"
	"fmt"
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
// (another open of the file) is refused like another process. Some
// network and FUSE filesystems refuse locks with ENOLCK, EOPNOTSUPP or
// ENOSYS (a FUSE server's answer to FUSE_SETLK reaches flock(2) as is:
// fuse_setlk in fs/fuse/file.c); the error then matches
// errors.ErrUnsupported as well as the errno.
func tryLock(f *os.File) error { return flockNB(int(f.Fd())) }

// flockNB is tryLock of a raw descriptor.
func flockNB(fd int) error {
	err := retryEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return errHeld
	case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("%w: flock: %w", errors.ErrUnsupported, err)
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
