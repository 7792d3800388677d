//go:build windows

package statefile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// replaceFile is the Windows best effort: renameio/v2 exports nothing here
// (renameio issue #1: Windows offers no atomic replace that always works).
// It writes a temp file beside path, fsyncs it (FlushFileBuffers) and moves
// it over path with MoveFileEx(MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH), retrying on the sharing and access errors other
// processes' open handles cause (see shareRetry).
//
// The temp file's handle stays open until the move is done, and that is
// what protects it from another Store's sweep (tempclaim_windows.go): the
// handle is opened with FILE_SHARE_READ | FILE_SHARE_DELETE and nothing
// more, and the sweep deletes only a file it can open with no sharing at
// all, which Windows refuses while this handle is open (CreateFileW,
// dwShareMode; "Creating and Opening Files" on learn.microsoft.com: an
// open fails if it asks for access an open handle's share mode does not
// allow, or if its own share mode does not allow an open handle's access).
// FILE_SHARE_DELETE is what lets
// MoveFileEx rename a file this handle still has open ("Delete access
// allows both delete and rename operations", CreateFileW). The handle also
// holds the LockFileEx lock of lock_windows.go where the volume allows it,
// so a sweep of offmain versions that locked instead of opening
// exclusively leaves it too.
//
// On failure the temp file is removed and path is left as it was: a
// failed MoveFileEx leaves it untouched.
func (s *Store) replaceFile(path string, data []byte, tr *SaveTrace) (err error) {
	dir := filepath.Dir(path)
	var f *os.File
	err = timed(&tr.Write, func() (err error) {
		f, err = newTempFile(dir, filepath.Base(path))
		if err != nil {
			return err
		}
		if s.hooks.tempCreated != nil {
			s.hooks.tempCreated(f.Name())
		}
		_, err = f.Write(data)
		return err
	})
	if f != nil {
		defer func() {
			// Closed after the move: until then the handle protects it. The
			// data was written (and flushed, if Durable) before the move, so
			// a close error after it changes nothing on disk.
			f.Close()
			if err != nil {
				os.Remove(f.Name())
			}
		}()
	}
	if err != nil {
		return err
	}
	if s.opts.Durability == Durable {
		if err = timed(&tr.Sync, f.Sync); err != nil {
			return err
		}
	}
	if s.hooks.beforeRename != nil {
		s.hooks.beforeRename(f.Name())
	}
	return timed(&tr.Rename, func() error { return moveReplace(f.Name(), path) })
}

// newTempFile creates dir\.<stem><n> (tempname.go) for writing, with n a
// random non-negative int64 as renameio draws it.
func newTempFile(dir, base string) (*os.File, error) {
	prefix := filepath.Join(dir, "."+tempStem(base))
	for try := 0; ; try++ {
		f, err := createTemp(prefix + strconv.FormatInt(rand.Int64(), 10))
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// createTemp creates the temp file name, failing rather than opening a
// file that exists (CREATE_NEW), and holds it: see replaceFile for its
// share mode and lock.
func createTemp(name string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(longPath(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_WRITE, windows.FILE_SHARE_READ|windows.FILE_SHARE_DELETE,
		nil, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(h), name)
	// Best effort: the share mode is what protects the file from this
	// version's sweep; the lock only keeps older versions' sweeps, which
	// locked instead, off it. A volume that refuses locks still saves.
	_ = tryLock(f)
	return f, nil
}

func moveReplace(from, to string) error {
	src, err := windows.UTF16PtrFromString(longPath(from))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	dst, err := windows.UTF16PtrFromString(longPath(to))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	const flags = windows.MOVEFILE_REPLACE_EXISTING | windows.MOVEFILE_WRITE_THROUGH
	err = shareRetry(func() error { return windows.MoveFileEx(src, dst, flags) })
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// shareRetryBudget bounds how long shareRetry retries. Chromium's
// ImportantFileWriter retries its ReplaceFile 5 times 100 ms apart for the
// same cause, scanners holding the file just written
// (base/files/important_file_writer.cc: kReplaceRetries,
// kReplacePauseInterval); this budget is twice that.
const shareRetryBudget = time.Second

// shareRetryMaxWait is the longest wait between two tries.
const shareRetryMaxWait = 16 * time.Millisecond

// shareRetry calls op until it succeeds, fails with an error other
// processes do not cause, or shareRetryBudget has passed, waiting 1 ms
// after the first failure and twice as long after each next one, up to
// shareRetryMaxWait: about 65 tries in the budget, so a file that readers
// keep opening is still caught between two of them. The errors retried are those of a handle another process holds:
// ERROR_SHARING_VIOLATION (it opened the file without sharing what op
// needs), ERROR_ACCESS_DENIED (MoveFileEx over a file that is open, even
// with FILE_SHARE_DELETE, or one pending deletion) and ERROR_LOCK_VIOLATION.
// Scanners and indexers open files just written; so does a Load in another
// process. A lasting ERROR_ACCESS_DENIED (no permission) costs the budget
// once per save and is then reported.
func shareRetry(op func() error) error {
	deadline := time.Now().Add(shareRetryBudget)
	wait := time.Millisecond
	for {
		err := op()
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return err
		}
		if shareRetried != nil {
			shareRetried(err)
		}
		time.Sleep(wait)
		wait = min(2*wait, shareRetryMaxWait)
	}
}

// shareRetried, if set, is called with the error of each try shareRetry
// retries (tests).
var shareRetried func(error)

func retryable(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// longPath returns an absolute path in the form Win32 calls accept beyond
// MAX_PATH (260) characters: prefixed with \\?\ ("Maximum Path Length
// Limitation", learn.microsoft.com), as the os package does for its own
// calls (os.fixLongPath). A state file's path is absolute and clean (Open).
// Others are returned as they are.
func longPath(p string) string {
	switch {
	case len(p) < 248 || strings.HasPrefix(p, `\\?\`) || !filepath.IsAbs(p):
		return p
	case strings.HasPrefix(p, `\\`): // \\server\share\...
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}

// syncDir is a no-op: Windows cannot open a directory for FlushFileBuffers
// without backup privileges; MOVEFILE_WRITE_THROUGH stands in for it.
func syncDir(string) error { return nil }

// syncsDir says whether syncDir does anything: not on Windows.
const syncsDir = false

// syncFile does nothing on Windows: FlushFileBuffers needs a handle open
// for writing, which a file the app may only read (a read-only attribute,
// an access list) would refuse, failing a save that writes nothing; a
// save's own moves write through (MOVEFILE_WRITE_THROUGH).
func syncFile(string) error { return nil }
