//go:build unix && !aix

package statefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Temp file claims. The sweep at a path's first Open removes the temp files
// a crash left, but the same path may be saved right then by another live
// process (or another Store) whose temp file looks the same. So a writer
// claims its temp file: it takes the same non-blocking flock(2) as
// Options.Exclusive on it until the rename is done. A sweep removes only
// temp files it can lock, and removes them before it unlocks. The kernel
// drops a dead process's locks, so what a SIGKILL left is swept at once,
// with no age rule and no clock.
//
// A writer holds a shared lock on the directory from before the
// creation to the claim, which a sweep's exclusive one excludes
// (dirlock_unix.go), so no sweep runs in between. Should one still (a
// filesystem that locks files but not directories), the writer sees that
// its file has no name left (a link count of 0, fstat(2)) and makes a new
// one. Once the writer holds the lock no sweep can remove the file.
//
// Windows has its own protocol (tempclaim_windows.go): the handle the
// writer creates the temp file with is the claim.

// errSwept says a sweep took the temp file between its creation and the
// claim; the writer makes a new one.
var errSwept = errors.New("statefile: temp file swept by another store")

// claimTemp claims fd, a temp file just created, and returns the claim: a
// descriptor of its own, to close after the rename. It returns -1 where
// the filesystem has no locks (see tryLock): the save goes on unclaimed,
// and a sweep there removes nothing it cannot lock either.
func claimTemp(fd int) (int, error) {
	err := flockNB(fd)
	switch {
	case errors.Is(err, errHeld):
		return -1, errSwept // a sweep holds it and removes it next
	case errors.Is(err, errors.ErrUnsupported):
		return -1, nil
	case err != nil:
		return -1, &fs.PathError{Op: "lock", Path: "temp file", Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return -1, &fs.PathError{Op: "stat", Path: "temp file", Err: err}
	}
	if st.Nlink == 0 {
		return -1, errSwept // removed before the lock
	}
	claim, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "dup", Path: "temp file", Err: err}
	}
	return claim, nil
}

// claimRetries bounds the new temp files a save makes when sweeps keep
// taking them; each Store sweeps a path once, at its first Open.
const claimRetries = 3

// removeIfDead removes the temp file name unless a live writer claims it.
// It removes only a file it could lock, and while it holds the lock: a
// writer that claims after the remove finds its file unlinked, one that
// tries before finds the lock held. Unlocking first would let a writer
// claim in between and then lose its file. A file it cannot lock for any
// other reason (a filesystem without locks: ENOLCK, EOPNOTSUPP, ENOSYS) it
// cannot tell from a live writer's, so it leaves it: on such a filesystem
// crash leftovers stay.
func removeIfDead(name string) {
	f, err := openTemp(name)
	if err != nil {
		return
	}
	if err = tryLock(f); err != nil {
		f.Close()
		return
	}
	os.Remove(name)
	f.Close()
}
