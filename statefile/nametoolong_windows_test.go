//go:build windows

package statefile

import (
	"errors"

	"golang.org/x/sys/windows"

	"github.com/offmain/offmain/internal/wine"
)

// isNameTooLong reports whether err says a name is too long for the file
// system. Windows answers a component over 255 units with
// ERROR_FILENAME_EXCED_RANGE ("The filename or extension is too long") or
// ERROR_INVALID_NAME. Wine, whose drives are Linux directories, looks the
// name up on Linux, gets ENAMETOOLONG and answers ERROR_FILE_NOT_FOUND.
func isNameTooLong(err error) bool {
	if wine.Version() != "" && errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return true
	}
	return errors.Is(err, windows.ERROR_FILENAME_EXCED_RANGE) || errors.Is(err, windows.ERROR_INVALID_NAME)
}
