package statefile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// pruneCorrupt bounds the moved-aside copies of path's corrupt files, so
// that a file that keeps turning up corrupt (a buggy writer, a disk that
// tears every write) cannot fill the disk with them (Chromium keeps a
// single one, see [DefaultMaxCorrupt]). It runs on
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
// a person's own "<name>.corrupt-mine" is not. A negative max keeps all.
// Errors are ignored: a copy left over is only what it was before.
func pruneCorrupt(path, newest string, max int) {
	if max < 0 {
		return
	}
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
		stamp, ok := strings.CutPrefix(e.Name(), base+CorruptSuffix)
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
