package statefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// corruptSuffix starts the name a corrupt file is moved to:
// "<name>.corrupt-<UTC time>" (see "Files on disk" in the package
// documentation).
const corruptSuffix = ".corrupt-"

// corruptTime is the layout of the time in a moved-aside copy's name: fixed
// width, so the names sort as the times do.
const corruptTime = "20060102T150405.000000000Z"

// quarantine moves q's file, which did not decode, aside, never deleting
// it, so a person (or a recovery tool) can still read what it held. It runs
// on q's writer. When the file cannot be moved (a read-only or immutable
// directory), q remembers it: the next save or remove retries the move and
// fails rather than replace bytes nobody has seen.
func (q *queue) quarantine(decodeErr error) error {
	aside, err := q.s.moveAside(q.path)
	d := &q.disk
	d.corrupt = err != nil && aside == "" && !errors.Is(err, fs.ErrNotExist)
	d.holds = seen{}
	q.setWrote(nil)
	if aside != "" {
		// Moved: the path holds nothing now, which is no news to the
		// watches.
		d.setKnown(seen{})
		q.watch.bad = badBytes{}
	}
	switch {
	case err == nil:
		return &CorruptError{Path: q.path, Aside: aside, Err: decodeErr}
	case errors.Is(err, fs.ErrNotExist): // someone else moved or removed it meanwhile
		return &CorruptError{Path: q.path, Err: decodeErr}
	case aside != "": // moved, but the directory fsync failed
		return &CorruptError{Path: q.path, Aside: aside, Err: decodeErr, AsideErr: err}
	default:
		return &CorruptError{Path: q.path, Err: decodeErr, AsideErr: err}
	}
}

// retryQuarantine runs before a save or remove of a path whose corrupt file
// could not be moved aside. It returns an error when the file is still
// there, so the commit does not overwrite it.
func (q *queue) retryQuarantine() error {
	if !q.disk.corrupt {
		return nil
	}
	aside, err := q.s.moveAside(q.path)
	if err == nil || aside != "" || errors.Is(err, fs.ErrNotExist) {
		q.disk.corrupt = false
		return nil
	}
	return fmt.Errorf("statefile: %s: corrupt file could not be moved aside, not replacing it: %w", q.path, err)
}

// moveAside renames path to "<path>.corrupt-<UTC time>", removes the
// copies beyond keptCorrupt (see pruneCorrupt) and, for a Durable
// Store, fsyncs the directory. aside is set once the rename happened, even
// if the fsync then failed.
func (s *Store) moveAside(path string) (aside string, err error) {
	name := path + corruptSuffix + time.Now().UTC().Format(corruptTime)
	if err := os.Rename(path, name); err != nil {
		return "", err
	}
	pruneCorrupt(path, name, keptCorrupt)
	if s.opts.Durability == Durable {
		return name, syncDir(filepath.Dir(path))
	}
	return name, nil
}

// pruneCorrupt bounds the moved-aside copies of path's corrupt files, so
// that a file that keeps turning up corrupt (a buggy writer, a disk that
// tears every write) cannot fill the disk with them (Chromium keeps a
// single one, see keptCorrupt). It runs on
// path's writer right after the move of newest, and removes a copy only if
//
//   - a newer copy that is kept holds the same bytes (so no bytes are lost:
//     the kept one has them), or
//   - max newer copies with bytes different from each other are kept.
//
// So the newest copy is always kept, and a copy whose bytes are in no other
// copy is deleted only once max newer, distinct ones were reported since:
// each copy was named by the [CorruptError] of the Load that moved it, so
// the app has had each of the newest max to log. Only names of the exact
// shape "<name>.corrupt-<UTC time>" that this package writes are touched:
// a person's own "<name>.corrupt-mine" is not. Errors are ignored: a copy
// left over is only what it was before.
func pruneCorrupt(path, newest string, max int) {
	copies := corruptCopies(path)
	if len(copies) <= 1 {
		return
	}
	var kept [][]byte // the bytes of the copies kept so far, newest first
	for _, name := range copies {
		data, err := os.ReadFile(name)
		if err != nil {
			continue // gone, or unreadable: leave it alone
		}
		dup := slices.ContainsFunc(kept, func(k []byte) bool { return bytes.Equal(k, data) })
		if name == newest || (!dup && len(kept) < max) {
			kept = append(kept, data)
			continue
		}
		_ = os.Remove(name)
	}
}

// corruptCopies returns the moved-aside copies of path, newest first.
func corruptCopies(path string) []string {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), base+corruptSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if _, err := time.Parse(corruptTime, stamp); err != nil || len(stamp) != len(corruptTime) {
			continue
		}
		names = append(names, filepath.Join(dir, e.Name()))
	}
	slices.Sort(names)
	slices.Reverse(names)
	return names
}
