//go:build unix && !aix

package statefile

import (
	"golang.org/x/sys/unix"
)

// Directory locks close the window between a temp file's creation and its
// claim (tempclaim.go). A writer holds a shared flock(2) on the directory
// from before it creates its temp file until it has claimed it; a sweep
// removes nothing unless it holds the exclusive lock. So a sweep never sees
// a temp file that exists but is not claimed yet by a live writer: it runs
// before the creation or after the claim. Without it, a sweep that lists
// the directory in that window takes the file, and the save must make
// another: with three processes each opening a new Store every few saves,
// one claim in ten was lost so. flock(2) works on a directory opened
// read-only, and like every flock lock it dies with its process.

// dirLock is a held directory lock, a descriptor of the directory of its
// own; release ends it. A nil dirLock (no lock held) may be released.
type dirLock struct{ fd int }

func (l *dirLock) release() {
	if l != nil {
		unix.Close(l.fd) // closing the only descriptor drops the flock
	}
}

// openDir opens dir for a lock or an fsync. It is a raw descriptor, not an
// *os.File: the save path makes no call the Go runtime's poller adds
// (fcntl(2) and epoll_ctl(2) at each open, and again at each Fd).
func openDir(dir string) (fd int, err error) {
	err = retryEINTR(func() error {
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}

// lockDirShared takes the writers' shared lock on dir, waiting for a sweep
// that holds it (a sweep holds it for a few opens and removes). Where the
// directory cannot be locked (a filesystem without flock, or an NFS mount
// that emulates flock with fcntl locks and refuses them on a read-only
// descriptor: EBADF) it returns nil, and the save goes on as before: the
// sweep there cannot lock the directory either, and removes nothing.
func lockDirShared(dir string) *dirLock {
	fd, err := openDir(dir)
	if err != nil {
		return nil
	}
	if err := retryEINTR(func() error { return unix.Flock(fd, unix.LOCK_SH) }); err != nil {
		unix.Close(fd)
		return nil
	}
	return &dirLock{fd: fd}
}

// lockDirSweep takes the sweep's exclusive lock on dir without waiting. It
// returns nil when writers hold it (a save is between creating and
// claiming its temp file) or the directory cannot be locked: the sweep then
// removes nothing, and the next first Open sweeps again.
func lockDirSweep(dir string) *dirLock {
	fd, err := openDir(dir)
	if err != nil {
		return nil
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return nil
	}
	return &dirLock{fd: fd}
}
