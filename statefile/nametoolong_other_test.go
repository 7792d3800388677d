//go:build !windows

package statefile

import (
	"errors"
	"syscall"
)

// isNameTooLong reports whether err says a name is too long for the file
// system: ENAMETOOLONG.
func isNameTooLong(err error) bool { return errors.Is(err, syscall.ENAMETOOLONG) }
