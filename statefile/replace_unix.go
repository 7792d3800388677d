//go:build unix && !aix

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
//
// The descriptors are raw ones, not *os.File: the runtime's poller would
// add fcntl(2) and epoll_ctl(2) calls to each open, none of which a regular
// file needs, and the save makes each system call once.
func (s *Store) replaceFile(path string, data []byte, tr *SaveTrace) (err error) {
	dir := filepath.Dir(path)
	fd, claim := -1, -1
	var name string
	err = timed(&tr.Write, func() (err error) {
		if fd, claim, name, err = s.newTemp(dir, filepath.Base(path)); err != nil {
			return err
		}
		return writeAll(fd, name, data)
	})
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
		if err != nil && name != "" {
			unix.Unlink(name)
		}
		if claim >= 0 {
			unix.Close(claim) // after the rename (or the removal): the claim ends here
		}
	}()
	if err != nil {
		return err
	}
	durable := s.opts.Durability == Durable
	if durable {
		if err = timed(&tr.Sync, func() error { return pathErr("sync", name, retryEINTR(func() error { return unix.Fsync(fd) })) }); err != nil {
			return err
		}
	}
	err, fd = pathErr("close", name, unix.Close(fd)), -1
	if err != nil {
		return err
	}
	if s.hooks.beforeRename != nil {
		s.hooks.beforeRename(name)
	}
	if err = timed(&tr.Rename, func() error { return rename(name, path) }); err != nil {
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
// file in between. It returns the file's descriptor, the claim's (-1 where
// the filesystem has no locks) and its name.
func (s *Store) newTemp(dir, base string) (fd, claim int, name string, err error) {
	dl := lockDirShared(dir)
	defer dl.release()
	for range claimRetries {
		fd, name, err = createTemp(dir, base, s.opts.perm())
		if err != nil {
			return -1, -1, "", err
		}
		if s.hooks.tempCreated != nil {
			s.hooks.tempCreated(name)
		}
		claim, err = claimTemp(fd)
		if err == nil {
			return fd, claim, name, nil
		}
		unix.Close(fd)
		unix.Unlink(name)
		if !errors.Is(err, errSwept) {
			return -1, -1, "", err
		}
	}
	return -1, -1, "", errSwept
}

// createTemp creates a new temp file for the state file base in dir,
// failing rather than opening a name that exists (O_EXCL: a planted symlink
// is not followed either), with perm before the umask. The name is
// renameio's shape: the stem and a random non-negative int64 in decimal.
func createTemp(dir, base string, perm fs.FileMode) (int, string, error) {
	prefix := filepath.Join(dir, "."+tempStem(base))
	for try := 0; ; try++ {
		name := prefix + strconv.FormatInt(rand.Int64(), 10)
		var fd int
		err := retryEINTR(func() (err error) {
			fd, err = unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(perm.Perm()))
			return err
		})
		if err == unix.EEXIST && try < 10000 {
			continue
		}
		if err != nil {
			return -1, "", &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return fd, name, nil
	}
}

// writeAll writes data to fd, on as many write(2) calls as it takes.
func writeAll(fd int, name string, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return &fs.PathError{Op: "write", Path: name, Err: err}
		case n == 0:
			return &fs.PathError{Op: "write", Path: name, Err: unix.EIO}
		}
		data = data[n:]
	}
	return nil
}

// rename renames from over to, as os.Rename does but without its lstat of
// to (which only refuses a directory there, as rename(2) does itself with
// EISDIR).
func rename(from, to string) error {
	if err := retryEINTR(func() error { return unix.Rename(from, to) }); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// retryEINTR runs a system call again when a signal interrupted it: the Go
// runtime sends SIGURG to preempt goroutines, and a call made outside the
// os package gets no retry of its own. A blocking flock is such a call
// (flock(2), EINTR: "While waiting to acquire a lock, the call was
// interrupted by delivery of a signal").
func retryEINTR(call func() error) error {
	// An O_CREAT|O_EXCL open interrupted after it created the file, as on
	// some network and FUSE filesystems, leaves the name taken: the next
	// try draws another (createTemp), and the file left is a dead temp
	// file the next sweep removes.
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// pathErr names path and op in a step's errno; nil stays nil.
func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// syncFile fsyncs the file at path, for bytes another program wrote that a
// save finds there already.
func syncFile(path string) error {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	err = pathErr("sync", path, retryEINTR(func() error { return unix.Fsync(fd) }))
	unix.Close(fd)
	return err
}

// syncsDir says whether syncDir does anything: it does on Unix.
const syncsDir = true

// syncDir fsyncs a directory so the entries changed in it (a rename, a
// remove, a new file) survive a power cut; see fsync(2).
func syncDir(dir string) error {
	fd, err := openDir(dir)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	err = pathErr("sync", dir, retryEINTR(func() error { return unix.Fsync(fd) }))
	if cerr := unix.Close(fd); err == nil {
		err = pathErr("close", dir, cerr)
	}
	return err
}
