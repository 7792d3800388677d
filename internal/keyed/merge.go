package keyed

import (
	"maps"
	"slices"
	"time"
)

// TombstoneTTL is how long a watching store keeps, and writes, the
// tombstone of a deleted key. It must outlast the time another process can
// go without merging the file, or that process's next save brings the value
// back: statefile reports a change within a second of its last event, so an
// hour leaves room for a disk that hangs or a laptop that sleeps mid-merge,
// while a file with nothing left in it is still removed the same day.
const TombstoneTTL = time.Hour

// Expired reports whether a tombstone made at at has outlived TombstoneTTL
// at now.
func Expired(at, now time.Time) bool { return at.Before(now.Add(-TombstoneTTL)) }

// Prune drops the expired tombstones from gone, from memory as from the
// next save, so that no process keeps fighting for a delete the file no
// longer holds. gone may be nil (a store that does not watch).
func Prune(gone map[string]time.Time, now time.Time) {
	maps.DeleteFunc(gone, func(_ string, at time.Time) bool { return Expired(at, now) })
}

// Diff returns, sorted, the keys whose value differs between before and
// after, by same: the keys a merge reports to OnChange.
func Diff[V any](before, after map[string]V, same func(a, b V) bool) []string {
	var keys []string
	for k, v := range after {
		if b, ok := before[k]; !ok || !same(b, v) {
			keys = append(keys, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
