package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// sweepTemps removes the temp files a crash left beside path: renameio
// names them "." + base + decimal digits (Windows: os.CreateTemp, the same
// shape). It runs on the path's writer before the path's first save, so it
// never races with this Store's own temp files, and it skips those that a
// live writer in another process or Store has claimed (tempclaim.go).
// Errors are ignored: a leftover is harmless, and the save after it reports
// a real disk problem.
func (s *Store) sweepTemps(path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && isTempName(e.Name(), base) {
			removeIfDead(filepath.Join(dir, e.Name()))
		}
	}
}

func isTempName(name, base string) bool {
	digits, ok := strings.CutPrefix(name, "."+base)
	if !ok || digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// CorruptSuffix starts the name a corrupt file is moved to:
// "<name>.corrupt-<UTC time>".
const CorruptSuffix = ".corrupt-"

// quarantine moves q's file, which did not decode, aside, never deleting
// it, so a person (or a recovery tool) can still read what it held. It runs
// on q's writer. When the file cannot be moved (a read-only or immutable
// directory), q remembers it: the next save or remove retries the move and
// fails rather than replace bytes nobody has seen.
func (q *queue) quarantine(decodeErr error) error {
	aside, err := q.s.moveAside(q.path)
	switch {
	case err == nil:
		q.corruptInPlace = false
		return &CorruptError{Path: q.path, Aside: aside, Err: decodeErr}
	case errors.Is(err, fs.ErrNotExist): // someone else moved or removed it meanwhile
		q.corruptInPlace = false
		return &CorruptError{Path: q.path, Err: decodeErr}
	case aside != "": // moved, but the directory fsync failed
		q.corruptInPlace = false
		return &CorruptError{Path: q.path, Aside: aside, Err: errors.Join(decodeErr, err)}
	default:
		q.corruptInPlace = true
		return &CorruptError{Path: q.path, Err: errors.Join(decodeErr, err)}
	}
}

// retryQuarantine runs before a save or remove of a path whose corrupt file
// could not be moved aside. It returns an error when the file is still
// there, so the commit does not overwrite it.
func (q *queue) retryQuarantine() error {
	if !q.corruptInPlace {
		return nil
	}
	aside, err := q.s.moveAside(q.path)
	if err == nil || aside != "" || errors.Is(err, fs.ErrNotExist) {
		q.corruptInPlace = false
		return nil
	}
	return fmt.Errorf("statefile: %s: corrupt file could not be moved aside, not replacing it: %w", q.path, err)
}

// moveAside renames path to "<path>.corrupt-<UTC time>" and, for a Durable
// Store, fsyncs the directory. aside is set once the rename happened, even
// if the fsync then failed.
func (s *Store) moveAside(path string) (aside string, err error) {
	name := path + CorruptSuffix + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, name); err != nil {
		return "", err
	}
	if s.opts.Durability == Durable {
		return name, syncDir(filepath.Dir(path))
	}
	return name, nil
}
