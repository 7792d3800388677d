//go:build windows

package statefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

func openLockFile(name string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE, perm)
}

// lockRange is the byte range locked: one byte at 4 GiB, past the pid.
// Windows byte-range locks are mandatory (LockFileEx: "If the locking
// process opens the file a second time, it cannot access the specified
// region through this second handle"), so locking the pid's bytes would
// keep the second process from reading who holds the lock.
func lockRange() *windows.Overlapped { return &windows.Overlapped{OffsetHigh: 1} }

// tryLock takes an exclusive LockFileEx lock without waiting. The system
// releases it when the handle is closed or the process ends.
func tryLock(f *os.File) error {
	const flags = windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, lockRange())
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errHeld
	}
	return err
}

func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange())
}
