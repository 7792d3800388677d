//go:build !windows

package statefile

import (
	"errors"
	"io/fs"
	"os"
)

// Temp file claims. The sweep at a path's first Open removes the temp files
// a crash left, but the same path may be saved right then by another live
// process (or another Store) whose temp file looks the same. So a writer
// claims its temp file: it opens it a second time and takes the same
// non-blocking lock as Options.Exclusive (flock(2) on Unix) on that open
// file until the rename is done. A sweep removes only temp files it can
// lock, and removes them before it unlocks. The kernel drops a dead
// process's locks, so what a SIGKILL left is swept at once, with no age
// rule and no clock.
//
// Windows has its own protocol (tempclaim_windows.go): the handle the
// writer creates the temp file with is the claim.

// errSwept says a sweep took the temp file between its creation and the
// claim; the writer makes a new one.
var errSwept = errors.New("statefile: temp file swept by another store")

// claimTemp claims the temp file name, just created as created. The caller
// closes the returned file (which releases the claim) after the rename; it
// is nil where locks are not supported (the platform, or the filesystem:
// see tryLock), and the save then goes on unclaimed: a sweep there removes
// nothing it cannot lock either.
func claimTemp(name string, created *os.File) (*os.File, error) {
	f, err := openTemp(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errSwept
	}
	if err != nil {
		return nil, err
	}
	if err = tryLock(f); err != nil {
		f.Close()
		switch {
		case errors.Is(err, errHeld):
			return nil, errSwept // a sweep holds it and removes it next
		case errors.Is(err, errors.ErrUnsupported):
			return nil, nil
		}
		return nil, err
	}
	// A sweep may have locked, removed and unlocked it between the
	// creation and the lock: the name must still be the created file.
	cst, err1 := created.Stat()
	nst, err2 := os.Lstat(name)
	if err1 != nil || err2 != nil || !os.SameFile(cst, nst) {
		f.Close()
		return nil, errSwept
	}
	return f, nil
}

// claimRetries bounds the new temp files a save makes when sweeps keep
// taking them; each Store sweeps a path once, at its first Open.
const claimRetries = 3

// removeIfDead removes the temp file name unless a live writer claims it.
// It removes only a file it could lock, and while it holds the lock: a
// writer that claims after the remove finds the name gone (claimTemp's
// same-file check), one that tries before finds the lock held. Unlocking
// first would let a writer claim in between and then lose its file. A file
// it cannot lock for any other reason (a filesystem without locks:
// ENOLCK, EOPNOTSUPP, ENOSYS) it cannot tell from a live writer's, so it
// leaves it: on such a filesystem crash leftovers stay.
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
