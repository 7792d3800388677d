//go:build !windows

package statefile

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// replaceFile writes data to a temp file beside path and renames it over
// path. renameio creates the temp file (O_EXCL, random name ".<stem><n>",
// so a symlink planted at that name is never followed; the stem is path's
// name unless that is too long: tempname.go) and removes it on failure. The commit order is ours rather than CloseAtomicallyReplace's,
// so each step is timed for SaveTrace, Atomic durability can skip the
// fsync, and the directory is fsynced after the rename.
func (s *Store) replaceFile(path string, data []byte, tr *SaveTrace) (err error) {
	dir := filepath.Dir(path)
	var pf *renameio.PendingFile
	var claim *os.File
	err = timed(&tr.Write, func() (err error) {
		pf, claim, err = s.newTemp(path, dir)
		if err != nil {
			return err
		}
		_, err = pf.Write(data)
		return err
	})
	if claim != nil {
		defer claim.Close() // after the rename: the claim protects the temp name until then
	}
	if pf != nil {
		defer func() {
			if err != nil {
				pf.Cleanup() //nolint:errcheck // the commit's error is the one to report
			}
		}()
	}
	if err != nil {
		return err
	}
	durable := s.opts.Durability == Durable
	if durable {
		if err = timed(&tr.Sync, pf.Sync); err != nil {
			return err
		}
	}
	if err = pf.File.Close(); err != nil {
		return err
	}
	if s.beforeRename != nil {
		s.beforeRename(pf.Name())
	}
	if err = timed(&tr.Rename, func() error { return os.Rename(pf.Name(), path) }); err != nil {
		return err
	}
	if durable {
		return timed(&tr.DirSync, func() error { return s.syncDir(dir) })
	}
	return nil
}

// newTemp creates the temp file and claims it (tempclaim.go) so a sweep by
// another Store leaves it alone. It holds the directory's shared lock from
// before the creation to the claim (dirlock_unix.go), so no sweep can take
// the file in between; should one still (a filesystem that locks files but
// not directories), it makes a new one.
func (s *Store) newTemp(path, dir string) (*renameio.PendingFile, *os.File, error) {
	dl := lockDirShared(dir)
	defer dl.release()
	// renameio names the temp file after the base of the path it is given,
	// and uses that path for nothing else here (CloseAtomicallyReplace is
	// not called): given the stem, it makes ".<stem><n>".
	stemPath := filepath.Join(dir, tempStem(filepath.Base(path)))
	for range claimRetries {
		pf, err := renameio.NewPendingFile(stemPath, renameio.WithTempDir(dir), renameio.WithPermissions(s.opts.perm()))
		if err != nil {
			return nil, nil, err
		}
		if s.tempCreated != nil {
			s.tempCreated(pf.Name())
		}
		claim, err := claimTemp(pf.Name(), pf.File)
		if err == nil {
			return pf, claim, nil
		}
		pf.Cleanup() //nolint:errcheck // the claim's error is the one to report
		if !errors.Is(err, errSwept) {
			return nil, nil, err
		}
	}
	return nil, nil, errSwept
}

// syncsDir says whether syncDir does anything: it does on Unix.
const syncsDir = true

// syncDir fsyncs a directory so the entries changed in it (a rename, a
// remove, a new file) survive a power cut; see fsync(2).
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
