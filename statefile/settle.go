package statefile

import (
	"slices"
	"time"
)

// Settle windows of a watch. An editor's save is a burst of events (create
// a temp file, write, rename over; or truncate, write, write), and a reader
// that wakes on the first event can see a half-written file. A path is
// checked once it has been quiet for settleQuiet, the window Android's
// SharedPreferences and VS Code use for their own writes (100 ms, see
// ANCHORS.md). settleMax bounds the wait, so a path that never goes quiet
// (a sync tool rewriting it in a loop) is still checked once a second.
const (
	settleQuiet = 100 * time.Millisecond
	settleMax   = time.Second
)

// settler turns a stream of events per path into one check per burst. It
// does no I/O and reads no clock: the watch loop passes the time in, so its
// rules are tested without timers. It is owned by one goroutine.
type settler struct {
	quiet, max time.Duration
	bursts     map[string]burst // paths with events not yet checked
}

// burst is the span of a path's events since its last check.
type burst struct{ first, last time.Time }

func newSettler(quiet, max time.Duration) *settler {
	return &settler{quiet: quiet, max: max, bursts: make(map[string]burst)}
}

// poke records an event for path at now.
func (st *settler) poke(path string, now time.Time) {
	b, ok := st.bursts[path]
	if !ok {
		b.first = now
	}
	b.last = now
	st.bursts[path] = b
}

// dueAt is when b is checked: quiet after its last event, but no later
// than max after its first.
func (st *settler) dueAt(b burst) time.Time {
	return minTime(b.last.Add(st.quiet), b.first.Add(st.max))
}

// due removes and returns, sorted, the paths whose burst is due at now.
func (st *settler) due(now time.Time) []string {
	var paths []string
	for p, b := range st.bursts {
		if !st.dueAt(b).After(now) {
			paths = append(paths, p)
			delete(st.bursts, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// next returns the earliest time a burst is due, and false when none waits.
func (st *settler) next() (time.Time, bool) {
	var at time.Time
	for _, b := range st.bursts {
		if d := st.dueAt(b); at.IsZero() || d.Before(at) {
			at = d
		}
	}
	return at, !at.IsZero()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
