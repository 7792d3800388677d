//go:build windows

package statefile

import "golang.org/x/sys/windows"

// removeIfDead removes the temp file name unless a live writer holds it.
// A writer keeps the handle it created the file with open until its move
// is done, sharing only read and delete (replace_windows.go). removeIfDead
// opens the file asking to share nothing, with FILE_FLAG_DELETE_ON_CLOSE:
// Windows refuses that open with ERROR_SHARING_VIOLATION while any other
// handle to the file is open, because the new open would deny the access
// that handle has (CreateFileW, dwShareMode: "If this parameter is zero
// and CreateFile succeeds, the file or device cannot be shared and cannot
// be opened again until the handle to the file or device is closed"; the
// same check runs the other way). When the open succeeds no one else has
// the file open, and none can open it before the close deletes it. So the
// check and the removal are one step, with no window for a writer, and no
// directory lock is needed (dirlock_other.go). A symlink planted at the
// name is removed itself, not followed (FILE_FLAG_OPEN_REPARSE_POINT).
// Any other failure (gone, read-only, no permission) leaves the file.
func removeIfDead(name string) {
	p, err := windows.UTF16PtrFromString(longPath(name))
	if err != nil {
		return
	}
	h, err := windows.CreateFile(p, windows.DELETE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_DELETE_ON_CLOSE|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return
	}
	windows.CloseHandle(h) //nolint:errcheck // the close is the delete; a leftover is harmless
}
