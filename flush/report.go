package flush

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/offmain/offmain/internal/oneline"
)

// Report says what one [Hook.Run] achieved.
type Report struct {
	// Drained is true when every item drained (also when there were none).
	Drained bool
	// Took is how long Run took: at most the deadline plus the time to
	// notice it.
	Took time.Duration
	// Items has one entry per [Hook.Add], in Add order.
	Items []Item
}

// Item is the outcome for one added [Flusher].
type Item struct {
	Name string
	// Drained is true when the Flusher returned nil before Run returned: by
	// the deadline, or within [Grace] after it.
	Drained bool
	// Err is nil when Drained. Otherwise it is the Flusher's own error if it
	// returned one first (a *statefile.NotDrainedError names the paths still
	// pending), or, for a Flusher still running at the deadline, an error
	// for which errors.Is(err, context.DeadlineExceeded) holds
	// (context.Canceled if a RunContext parent was canceled).
	Err error
}

// String returns the report on one line, fit for a log at quit:
//
//	flush: drained 2/2 in 3ms
//	flush: drained 1/2 in 2.01s; not drained: drafts: flush: still flushing at the deadline: context deadline exceeded
//
// Each item not drained is written as its name, then its error folded onto
// the line; the name is left out when the error already starts with it
// followed by ": ".
func (r Report) String() string {
	return r.format("flush: ")
}

func (r Report) format(prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	n := 0
	for _, it := range r.Items {
		if it.Drained {
			n++
		}
	}
	b.WriteString("drained ")
	b.WriteString(strconv.Itoa(n))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(len(r.Items)))
	b.WriteString(" in ")
	b.WriteString(roundTook(r.Took).String())
	sep := "; not drained: "
	for _, it := range r.Items {
		if it.Drained {
			continue
		}
		b.WriteString(sep)
		sep = "; "
		msg := "not drained"
		if it.Err != nil {
			msg = oneline.Fold(it.Err.Error())
		}
		// An error that starts with the item's name already says whose it
		// is (a *statefile.Store added as "statefile" fails with
		// "statefile: not drained: ..."): one prefix, not two.
		if !strings.HasPrefix(msg, it.Name+": ") {
			b.WriteString(it.Name)
			b.WriteString(": ")
		}
		b.WriteString(msg)
	}
	return b.String()
}

// clone returns r with Items of its own, for each Run that returns it.
func (r Report) clone() Report {
	r.Items = slices.Clone(r.Items)
	return r
}

func roundTook(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}
