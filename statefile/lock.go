package statefile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// lockSuffix ends the name of a path's lock file, "<name>.lock", beside the
// state file (see "Files on disk" in the package documentation).
const lockSuffix = ".lock"

// ErrLocked is matched (with errors.Is) by the error Open returns when
// [Options.Exclusive] is set and another Store, in this process or
// another, holds the path's lock. See [LockedError].
var ErrLocked = errors.New("statefile: locked by another store")

// LockedError reports that another Store holds a path's lock.
// errors.Is(err, ErrLocked) holds for it.
type LockedError struct {
	Path string // the state file
	PID  int    // the holder's process id, from the lock file; 0 if unknown
}

func (e *LockedError) Error() string {
	holder := "an unknown process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return "statefile: " + e.Path + " is locked by " + holder + " (lock file " + e.Path + lockSuffix + ")"
}

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// errHeld is what the per-OS tryLock returns when the lock is taken.
var errHeld = errors.New("lock held")

// fileLock is a held lock on a path's lock file. The lock lives as long as
// the open file: the kernel drops it when the file is closed or the process
// dies (flock(2): "the lock is released either by an explicit LOCK_UN
// operation on any of these duplicate file descriptors, or when all such
// file descriptors have been closed"), so a dead holder's lock is free.
type fileLock struct {
	mu sync.Mutex // protects f
	f  *os.File   // nil once released
}

// lockPath takes the lock of path for Open, on the caller: one open and
// one non-blocking lock call (plus creating a missing directory). It
// writes this process's id into the lock file for the error a second
// holder gets. The lock file is never removed: removing it while another
// process opens it would let two processes lock two different files.
func (s *Store) lockPath(path string) (*fileLock, error) {
	name := path + lockSuffix
	f, err := openLockFile(name, s.opts.perm())
	if errors.Is(err, fs.ErrNotExist) {
		if err = s.mkdirAll(filepath.Dir(path)); err == nil {
			f, err = openLockFile(name, s.opts.perm())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("statefile: lock %s: %w", path, err)
	}
	if err = tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errHeld) {
			return nil, &LockedError{Path: path, PID: readPID(name)}
		}
		return nil, fmt.Errorf("statefile: lock %s: %w", path, err)
	}
	if err = writePID(f); err != nil {
		f.Close() // releases the lock
		return nil, fmt.Errorf("statefile: lock %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

// writePID writes "<pid>\n" over the start of f, then cuts what an older,
// longer id left; a reader in between still finds the new id on the first
// line.
func writePID(f *os.File) error {
	line := strconv.Itoa(os.Getpid()) + "\n"
	if _, err := f.WriteAt([]byte(line), 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(line)))
}

// readPID returns the process id on the first line of the lock file, or 0
// (the holder has not written it yet, or the file is unreadable).
func readPID(name string) int {
	f, err := os.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// release unlocks and closes the lock file. It is safe to call twice, and
// on a nil lock.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	unlock(l.f) //nolint:errcheck // the close below releases it anyway
	l.f.Close()
	l.f = nil
}

// held reports whether the lock is still held; a nil lock is not.
func (l *fileLock) held() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f != nil
}

// takeLock takes path's lock for a first Open when the Store is Exclusive;
// it returns nil when there is nothing to take. s.lockMu is held.
func (s *Store) takeLock(path string) (*fileLock, error) {
	if !s.opts.Exclusive {
		return nil, nil
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	s.mu.Lock()
	_, open := s.files[path]
	s.mu.Unlock()
	if open {
		return nil, nil
	}
	return s.lockPath(path)
}

// releaseIfDrained releases q's lock once the Store is closed and no save
// or remove of q is queued or running. It decides and releases under q.mu:
// a writer that went idle may call it after a Save queued just before
// Close has been taken by another writer, and that save must still run
// under the lock; and a retry is counted (takeRetry) under q.mu, so no
// retry can start between the decision and the release. Once closed is
// seen under q.mu no new save can be queued. It reports whether the lock
// is released (or there is none).
func (q *queue) releaseIfDrained() bool {
	if q.lock == nil {
		return true
	}
	q.mu.Lock()
	drained := q.s.closed.Load() && q.done == q.seq && q.idleLocked() // no op, and no retry, queued or running
	if drained {
		q.retry.ended = true // a retry asked for from now on writes nothing (unlockedRetry)
		q.lock.release()
	}
	q.mu.Unlock()
	if drained && q.s.hooks.lockReleased != nil {
		q.s.hooks.lockReleased()
	}
	return drained
}
