package statefile

import (
	"slices"
	"time"

	"github.com/offmain/offmain/internal/settle"
)

// Settle windows of a watch. An editor's save is a burst of events (create
// a temp file, write, rename over; or truncate, write, write), and a reader
// that wakes on the first event can see a half-written file. A path is
// checked once it has been quiet for settleQuiet, the window Android's
// SharedPreferences and VS Code use for their own writes (100 ms:
// SharedPreferencesImpl's and VS Code's storage flush delays). settleMax bounds the wait, so a path that never goes quiet
// (a sync tool rewriting it in a loop) is still checked once a second.
const (
	settleQuiet = 100 * time.Millisecond
	settleMax   = time.Second
)

// bursts turns a stream of events per path into one check per burst. The
// rule (quiet after the last event, but no later than max after the first)
// is settle.Burst's, the one drafts and anchors save by; it only
// keeps a burst per path. It does no I/O and reads no clock: the watch loop
// passes the time in, so its rules are tested without timers. It is owned
// by one goroutine.
type bursts struct {
	rule settle.Options
	open map[string]settle.Burst // paths with events not yet checked
}

func newBursts(quiet, max time.Duration) *bursts {
	return &bursts{
		rule: settle.Options{Settle: quiet, MaxWait: max},
		open: make(map[string]settle.Burst),
	}
}

// poke records an event for path at now.
func (st *bursts) poke(path string, now time.Time) {
	b := st.open[path]
	b.Add(now)
	st.open[path] = b
}

// due removes and returns, sorted, the paths whose burst is due at now.
func (st *bursts) due(now time.Time) []string {
	var paths []string
	for p, b := range st.open {
		if !b.Due(st.rule).After(now) {
			paths = append(paths, p)
			delete(st.open, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// next returns the earliest time a burst is due, and false when none waits.
func (st *bursts) next() (time.Time, bool) {
	var at time.Time
	for _, b := range st.open {
		if d := b.Due(st.rule); at.IsZero() || d.Before(at) {
			at = d
		}
	}
	return at, !at.IsZero()
}
