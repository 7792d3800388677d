package statefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// commitFunc puts data at path (data == nil: removes path) and fills the
// step timings of tr. It runs on the path's writer. Tests replace
// Store.hooks.commit with one that blocks on a channel (testing/synctest
// cannot wait on a real syscall).
type commitFunc func(path string, data []byte, tr *SaveTrace) error

// run executes one op on the writer: encode (for a save), the checks of
// the file it would replace, then commit.
func (q *queue) run(o op) error {
	s := q.s
	tr := SaveTrace{Path: q.path, Queued: o.queued, Superseded: o.superseded, Remove: o.kind == opRemove, Retry: o.retry}
	err := q.retryQuarantine()
	switch {
	case err != nil:
	case o.kind == opSave:
		err = q.runSave(&tr)
	default:
		if _, err = q.beforeWrite(nil); err == nil {
			err = s.hooks.commit(q.path, nil, &tr)
			q.committed(nil, err)
		}
	}
	tr.Err = err
	s.trace(tr)
	return err
}

// runSave encodes the writer's value and commits it, unless the file holds
// those bytes already (see beforeWrite).
func (q *queue) runSave(tr *SaveTrace) error {
	start := time.Now()
	data, err := q.slot.encode(q.path)
	tr.Encode = time.Since(start)
	tr.Bytes = len(data)
	if err != nil {
		return err
	}
	// Again: a Load in a MarshalJSON may have found the file corrupt and
	// failed to move it aside (see File.Load).
	if err := q.retryQuarantine(); err != nil {
		return err
	}
	same, err := q.beforeWrite(data)
	switch {
	case err != nil:
	case same:
		tr.Unchanged = true // no write, no fsync
	default:
		err = q.s.hooks.commit(q.path, data, tr)
		q.committed(data, err)
	}
	return err
}

// commitToDisk is the real commit step. Its errors name path, not the
// temp file or directory the failed step touched (see wrapDisk).
func (s *Store) commitToDisk(path string, data []byte, tr *SaveTrace) error {
	if data == nil {
		return wrapDisk("remove", path, s.removeFile(path, tr))
	}
	err := s.replaceFile(path, data, tr)
	if errors.Is(err, fs.ErrNotExist) {
		// The directory is missing: create it (0o700) and try once more.
		if mkErr := s.mkdirAll(filepath.Dir(path)); mkErr != nil {
			return wrapDisk("save", path, mkErr)
		}
		err = s.replaceFile(path, data, tr)
	}
	return wrapDisk("save", path, err)
}

// removeFile deletes path; a missing file is not an error. Durable removes
// fsync the directory so the deletion survives a power cut, also when the
// file is missing already: the unlink that removed it may be this Store's
// own earlier attempt, whose directory fsync failed (the retry then finds
// ENOENT), or another program's that nobody synced. Until the directory
// is synced, a power cut can bring the file back (fsync(2): "Calling
// fsync() does not necessarily ensure that the entry in the directory
// containing the file has also reached disk. For that an explicit fsync()
// on a file descriptor for the directory is also needed").
func (s *Store) removeFile(path string, tr *SaveTrace) error {
	start := time.Now()
	err := os.Remove(path)
	tr.Rename = time.Since(start)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if s.opts.Durability != Durable || !syncsDir {
		return nil
	}
	start = time.Now()
	err = s.hooks.syncDir(filepath.Dir(path))
	tr.DirSync = time.Since(start)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no directory, so no entry a power cut could bring back
	}
	return err
}

// mkdirAll creates dir and its missing parents with 0o700, and fsyncs the
// parent of each directory it made so the new entries are durable too.
func (s *Store) mkdirAll(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := s.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if s.opts.Durability == Durable {
		return syncDir(parent)
	}
	return nil
}

// timed runs fn and adds its duration to *d.
func timed(d *time.Duration, fn func() error) error {
	start := time.Now()
	err := fn()
	*d += time.Since(start)
	return err
}
