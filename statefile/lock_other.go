//go:build (!unix || aix) && !windows

package statefile

import (
	"errors"
	"io/fs"
	"os"
)

// On systems without flock or LockFileEx, Exclusive Opens fail rather than
// pretend to exclude.

func openLockFile(name string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE, perm)
}

func tryLock(*os.File) error { return errors.ErrUnsupported }

func unlock(*os.File) error { return nil }

func openTemp(name string) (*os.File, error) { return os.Open(name) }
