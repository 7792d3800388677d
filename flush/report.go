package flush

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/offmain/offmain/internal/oneline"
	"github.com/offmain/offmain/statefile"
)

// Report says what one [Hook.Run] or [Hook.Exit] achieved.
//
// What an app shows: when Saved is false, the person's data is not all on
// the disk: show String (one line per file not saved) and ask before
// quitting, or keep running and try again. Stopped false says a stopper
// did not end cleanly: with a qos.Group, its agents needed SIGKILL (an
// error wrapping qos.ErrKilled: they are gone) or still ran at the
// deadline (the Group's holder ends them with the app): nothing of the
// person's is lost, so log it and quit.
type Report struct {
	// Saved is true when every saver drained: each file holds what the
	// app saved (also when there were none).
	Saved bool
	// Stopped is true when every stopper returned nil: what they stop
	// ended cleanly (also when there were none, as in a Run).
	Stopped bool
	// Took is how long the call took: at most the deadline plus the time
	// to notice it.
	Took time.Duration
	// Items has one entry per [Hook.Add] (and, for an Exit, per
	// [Hook.AddStop]), in the order they were added.
	Items []Item
}

// Item is the outcome for one added [Flusher].
type Item struct {
	Name string
	Stop bool // a stopper ([Hook.AddStop])
	// Err is nil when the Flusher returned nil before the call returned:
	// by the deadline, or just after it. Otherwise it is the Flusher's own
	// error if it returned one (a *statefile.NotDrainedError names the
	// paths not on disk), or, for one still running at the deadline, an
	// error for which errors.Is(err, context.DeadlineExceeded) holds.
	Err error
}

// tally sets Saved and Stopped from the items.
func (r *Report) tally() {
	r.Saved, r.Stopped = true, true
	for _, it := range r.Items {
		switch {
		case it.Err == nil:
		case it.Stop:
			r.Stopped = false
		default:
			r.Saved = false
		}
	}
}

// drained reports whether every item returned nil.
func (r Report) drained() bool { return r.Saved && r.Stopped }

// String returns the report: a first line that counts what was saved and
// stopped, then one line for each file not saved, each named once however
// many savers reported it (a drafts.Store's file under drafts.Store and
// under the statefile.Store it saves through), and one for each other
// failure:
//
//	flush: saved 2/3, stopped 1/1 in 3ms
//	  /home/u/.config/app/settings.json: save: open temp file: read-only file system
//
// Each item's whole error is its Err.
func (r Report) String() string { return r.format("flush: ") }

func (r Report) format(prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	saved, savers, stopped, stoppers := 0, 0, 0, 0
	for _, it := range r.Items {
		switch {
		case it.Stop:
			stoppers++
			if it.Err == nil {
				stopped++
			}
		default:
			savers++
			if it.Err == nil {
				saved++
			}
		}
	}
	b.WriteString("saved " + strconv.Itoa(saved) + "/" + strconv.Itoa(savers))
	if stoppers > 0 {
		b.WriteString(", stopped " + strconv.Itoa(stopped) + "/" + strconv.Itoa(stoppers))
	}
	b.WriteString(" in " + roundTook(r.Took).String())
	for _, line := range r.lines() {
		b.WriteString("\n  " + line)
	}
	return b.String()
}

// lines are the report's lines after the first: each file not saved once,
// under the saver that reports the fewest files (the one that owns it:
// drafts.Store rather than the statefile.Store beside it), then each
// other failure with its item's name.
func (r Report) lines() []string {
	owner := map[string]int{} // path -> the item that shows it
	parts := make([]reported, len(r.Items))
	for i, it := range r.Items {
		if it.Err == nil {
			continue
		}
		parts[i] = split(it.Err)
		for p := range parts[i].paths {
			if j, ok := owner[p]; !ok || len(parts[i].paths) < len(parts[j].paths) {
				owner[p] = i
			}
		}
	}
	var lines []string
	for i, it := range r.Items {
		for _, p := range parts[i].order {
			if owner[p] == i {
				lines = append(lines, p+": "+parts[i].paths[p])
			}
		}
		for _, err := range parts[i].rest {
			msg := oneline.Fold(err.Error())
			if !strings.HasPrefix(msg, it.Name+": ") {
				msg = it.Name + ": " + msg // an error that starts with the name says whose it is
			}
			lines = append(lines, msg)
		}
	}
	return lines
}

// reported is an item's error split into the files it names and the rest.
type reported struct {
	paths map[string]string // path -> why it is not on disk, without the path
	order []string          // the paths in the order the error gives them
	rest  []error
}

// split takes the statefile.NotDrainedErrors out of err, walking the
// errors it joins (errors.Join, a drafts.Store's joined errors).
func split(err error) reported {
	var r reported
	var walk func(error)
	walk = func(err error) {
		var nd *statefile.NotDrainedError
		if e, ok := err.(*statefile.NotDrainedError); ok {
			nd = e
		} else if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if nd == nil {
			r.rest = append(r.rest, err)
			return
		}
		for _, p := range nd.Pending {
			r.add(p, "still saving at the deadline")
		}
		for p, e := range nd.Failed {
			r.add(p, oneline.Cause(p, e))
		}
	}
	walk(err)
	slices.Sort(r.order)
	return r
}

func (r *reported) add(path, why string) {
	if r.paths == nil {
		r.paths = map[string]string{}
	}
	if _, ok := r.paths[path]; !ok {
		r.order = append(r.order, path)
	}
	r.paths[path] = why
}

func roundTook(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}
