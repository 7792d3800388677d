//go:build windows

package statefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// errIsDir stops readStateFile's retries: CreateFile refuses to open a
// directory as a file with ERROR_ACCESS_DENIED.
var errIsDir = errors.New("is a directory")

// readStateFile reads a state file for Load. It opens the file sharing
// read, write and delete, so a save of another process can move its temp
// file over the path meanwhile (MoveFileEx needs delete access to the file
// it replaces, which a handle without FILE_SHARE_DELETE denies: os.ReadFile
// opens without it), and retries the open on the sharing and access errors
// another process's handle causes (a program that opened the file sharing
// no read, a file pending deletion) for up to shareRetryBudget, as a save
// retries its move.
func readStateFile(name string) ([]byte, error) {
	p, err := windows.UTF16PtrFromString(longPath(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var h windows.Handle
	err = shareRetry(func() (err error) {
		h, err = windows.CreateFile(p, windows.GENERIC_READ,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			if st, serr := os.Stat(name); serr == nil && st.IsDir() {
				return errIsDir // no one will let go of it
			}
		}
		return err
	})
	if err == errIsDir {
		// As on Unix: os.ReadFile of a directory says "Invalid function"
		// here (ReadFile on a directory handle), which says nothing.
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(h), name)
	defer f.Close()
	return io.ReadAll(f)
}
