//go:build windows

package statefile

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// replaceFile is the Windows best effort: renameio/v2 exports nothing here
// (renameio issue #1: Windows offers no atomic replace that always works).
// It writes a temp file beside path, fsyncs it (FlushFileBuffers) and moves
// it over path with MoveFileEx(MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH), retrying on sharing violations from scanners and
// indexers for up to a second, as Chromium's ImportantFileWriter does.
func (s *Store) replaceFile(path string, data []byte, tr *SaveTrace) (err error) {
	dir := filepath.Dir(path)
	var f *os.File
	err = timed(&tr.Write, func() (err error) {
		f, err = os.CreateTemp(dir, "."+filepath.Base(path)+"*")
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	})
	if f != nil {
		defer func() {
			if err != nil {
				f.Close()
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
	if err = f.Close(); err != nil {
		return err
	}
	return timed(&tr.Rename, func() error { return moveReplace(f.Name(), path) })
}

func moveReplace(from, to string) error {
	src, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	dst, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	const flags = windows.MOVEFILE_REPLACE_EXISTING | windows.MOVEFILE_WRITE_THROUGH
	deadline := time.Now().Add(time.Second)
	for {
		err = windows.MoveFileEx(src, dst, flags)
		if err == nil || time.Now().After(deadline) || !retryable(err) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func retryable(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}

// syncDir is a no-op: Windows cannot open a directory for FlushFileBuffers
// without backup privileges; MOVEFILE_WRITE_THROUGH stands in for it.
func syncDir(string) error { return nil }
