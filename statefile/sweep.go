package statefile

import (
	"errors"
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

// quarantine moves a file that did not decode aside, never deleting it, so
// a person (or a recovery tool) can still read what it held.
func (s *Store) quarantine(path string, decodeErr error) error {
	aside := path + CorruptSuffix + time.Now().UTC().Format("20060102T150405.000000000Z")
	err := os.Rename(path, aside)
	if err == nil && s.opts.Durability == Durable {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &CorruptError{Path: path, Err: errors.Join(decodeErr, err)}
	}
	return &CorruptError{Path: path, Aside: aside, Err: decodeErr}
}
