//go:build !windows

package statefile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// replaceFile writes data to a temp file beside path and renames it over
// path: create the temp file (O_EXCL, so a name already taken or a planted
// symlink is never opened), claim it (tempclaim.go), write, fsync (Durable),
// close, rename, and fsync the directory (Durable). Each step is timed for
// SaveTrace. On failure the temp file is removed and path is left as it
// was.
//
// The temp file is closed before the rename, as renameio's
// CloseAtomicallyReplace does: close(2) reports the write errors of
// filesystems that write back at close (NFS: nfs(5), "Data and metadata
// coherence"), and the file must not replace path if they happened. The
// claim is a second descriptor (dup(2)) of the same open file, whose lock
// outlives that close and protects the name until the rename is done.
func (s *Store) replaceFile(path string, data []byte, tr *SaveTrace) (err error) {
	dir := filepath.Dir(path)
	var f *os.File
	claim := -1
	err = timed(&tr.Write, func() (err error) {
		if f, claim, err = s.newTemp(dir, filepath.Base(path)); err != nil {
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
			if claim >= 0 {
				unix.Close(claim) // after the rename (or the removal): the claim ends here
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

// newTemp creates dir/.<stem><n> (tempname.go) and claims it, holding the
// directory's shared lock from before the creation to the claim
// (dirlock_unix.go), and makes a new one should a sweep still take the
// file in between. It returns the file and the claim's descriptor (-1
// where the filesystem has no locks).
func (s *Store) newTemp(dir, base string) (*os.File, int, error) {
	dl := lockDirShared(dir)
	defer dl.release()
	for range claimRetries {
		f, err := createTemp(dir, base, s.opts.perm())
		if err != nil {
			return nil, -1, err
		}
		if s.hooks.tempCreated != nil {
			s.hooks.tempCreated(f.Name())
		}
		claim, err := claimTemp(f)
		if err == nil {
			return f, claim, nil
		}
		f.Close()
		os.Remove(f.Name())
		if !errors.Is(err, errSwept) {
			return nil, -1, err
		}
	}
	return nil, -1, errSwept
}

// createTemp creates a new temp file for the state file base in dir,
// failing rather than opening a name that exists (O_EXCL: a planted symlink
// is not followed either), with perm before the umask.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	prefix := filepath.Join(dir, "."+tempStem(base))
	for try := 0; ; try++ {
		f, err := os.OpenFile(prefix+strconv.FormatInt(rand.Int64(), 10), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
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
