//go:build (!unix || aix) && !windows

package statefile

import (
	"os"
	"path/filepath"
)

// replaceFile writes data to a temp file beside path and renames it over
// path, with the os package alone: where flock(2) is missing the temp file
// is not claimed, and the sweep removes nothing (removeIfDead).
func (s *Store) replaceFile(path string, data []byte, tr *SaveTrace) (err error) {
	dir := filepath.Dir(path)
	var f *os.File
	err = timed(&tr.Write, func() (err error) {
		if f, err = os.CreateTemp(dir, "."+tempStem(filepath.Base(path))+"*"); err != nil {
			return err
		}
		if err = f.Chmod(s.opts.perm()); err != nil { // CreateTemp makes 0600; the umask is not applied here
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
			if err != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}()
	}
	if err != nil {
		return err
	}
	durable := s.opts.Durability == Durable
	if durable {
		if err = timed(&tr.Sync, f.Sync); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if s.hooks.beforeRename != nil {
		s.hooks.beforeRename(f.Name())
	}
	if err = timed(&tr.Rename, func() error { return os.Rename(f.Name(), path) }); err != nil {
		return err
	}
	if durable {
		return timed(&tr.DirSync, func() error { return s.hooks.syncDir(dir) })
	}
	return nil
}

// removeIfDead leaves name: without locks no live writer's temp file can be
// told from a crash's leftover.
func removeIfDead(string) {}

const syncsDir = true

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncFile fsyncs the file at path, for bytes another program wrote that a
// save finds there already.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
