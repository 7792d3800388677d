package stall

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"time"

	"golang.org/x/exp/trace"
)

// hangAfter is how long a wait that is still going on lasts before a pass
// reports it: a goroutine that never comes back must be reported while
// the app still runs.
const hangAfter = time.Second

// perSite is the shortest time between two reports of one call site.
const perSite = time.Second

// A wait is one wait of the watched goroutine, from the event that began
// it.
type wait struct {
	start    trace.Time
	thread   trace.ThreadID // the thread it began on
	syscall  bool           // in a system call or a cgo call, not blocked in Go
	reason   string         // the runtime's block reason, for a Go wait
	stack    trace.Stack
	inFrame  bool // began inside a Frame mark
	reported bool // judged while it went on, so not again at its end
}

// An analyzer follows the watched goroutine through the trace, one
// generation at a time, and turns its long waits into reports. A
// snapshot holds the generations of the last snapshot too: those are
// skipped, so each event is judged once.
type analyzer struct {
	g      trace.GoID
	budget time.Duration
	idle   map[string]bool
	goos   string
	// files names the system call a thread was seen in between two
	// monotonic times, and its file (see sampler.lookup).
	files func(tid int64, from, to int64) (name, path string)

	lastGen trace.Time           // the newest generation analysed, by its clock snapshot
	clock   *trace.ClockSnapshot // of the generation being analysed
	now     trace.Time           // the newest event seen
	open    *wait                // the wait going on, if any
	framed  bool                 // a Frame mark was seen: waits outside frames are idle
	depth   int                  // Frame marks open
	limit   limiter
	pending []ended  // the pass's waits longer than the budget, for settle
	reports []Report // made by the pass, to deliver
}

// An ended wait is one that lasted longer than the budget: until end, or
// until the pass, if ongoing.
type ended struct {
	w       *wait
	end     trace.Time
	ongoing bool
}

// pass analyses the generations of the snapshot data that are newer than
// the last pass's. final is the last pass, at stop: a wait still going
// on is then reported once it exceeds the budget.
func (a *analyzer) pass(data []byte, final bool) error {
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	skip, newest := true, a.lastGen
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if ev.Kind() == trace.EventSync {
			// A generation begins with a Sync that holds its clock
			// snapshot; the reader's last event is a Sync without one
			// (Go 1.25 added the snapshot, and the flight recorder).
			if cs := ev.Sync().ClockSnapshot; cs != nil {
				if skip = cs.Trace <= a.lastGen; !skip {
					newest, a.clock = cs.Trace, cs
				}
			}
			continue
		}
		if !skip {
			a.event(ev)
		}
	}
	a.lastGen = newest
	a.overdue(final)
	a.settle()
	return nil
}

func (a *analyzer) event(ev trace.Event) {
	a.now = max(a.now, ev.Time())
	switch ev.Kind() {
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind == trace.ResourceGoroutine && st.Resource.Goroutine() == a.g {
			a.transition(ev, st)
		}
	case trace.EventLog:
		if ev.Goroutine() == a.g {
			a.mark(ev.Log())
		}
	}
}

// transition follows the goroutine from state to state. A generation
// begins with the state of each goroutine (from itself, or undetermined
// in a snapshot's first generation): the same wait going on, or, after
// generations lost to the recorder's size limit, the end of one unseen.
func (a *analyzer) transition(ev trace.Event, st trace.StateTransition) {
	from, to := st.Goroutine()
	switch {
	case to == trace.GoSyscall || to == trace.GoWaiting:
		if a.open != nil && (from == to || from == trace.GoUndetermined) {
			return
		}
		a.open = &wait{start: ev.Time(), thread: ev.Thread(), syscall: to == trace.GoSyscall,
			reason: st.Reason, stack: st.Stack, inFrame: a.depth > 0}
	case from == trace.GoSyscall || from == trace.GoWaiting:
		if w := a.open; w != nil && !w.reported {
			a.judge(w, ev.Time(), false)
		}
		a.open = nil
	case from == trace.GoUndetermined:
		a.open = nil
	}
}

// mark follows the Frame marks.
func (a *analyzer) mark(l trace.Log) {
	if l.Category != markCategory {
		return
	}
	switch l.Message {
	case markStart:
		a.framed = true
		a.depth++
	case markEnd:
		a.depth = max(a.depth-1, 0)
	}
}

// overdue judges the wait going on, if it has lasted hangAfter (at the
// final pass, the budget).
func (a *analyzer) overdue(final bool) {
	w := a.open
	if w == nil || w.reported {
		return
	}
	after := hangAfter
	if final {
		after = a.budget
	}
	if a.now.Sub(w.start) > after {
		w.reported = true
		a.judge(w, a.now, true)
	}
}

// judge reports w, which lasted until end, if it is a stall.
// judge keeps w, which lasted until end, for settle if it may be a
// stall.
func (a *analyzer) judge(w *wait, end trace.Time, ongoing bool) {
	if end.Sub(w.start) > a.budget {
		a.pending = append(a.pending, ended{w, end, ongoing})
	}
}

// settle reports the pass's long waits that are stalls. It runs at the
// end of the pass, so that a wait before the first Frame mark is idle if
// the pass has a mark after it: an app that marks frames waits for its
// first one unmarked.
func (a *analyzer) settle() {
	for _, e := range a.pending {
		all := frames(e.w.stack)
		if e.w.syscall && (cgo(all) || neverBlocks[syscallName(all, a.goos)]) || own(all) || notWaiting[e.w.reason] {
			continue
		}
		fs := fromSite(all)
		if a.idleWait(e.w, fs) {
			continue
		}
		var site uint64
		if len(fs) > 0 {
			site = uint64(fs[0].PC)
		}
		if dropped, ok := a.limit.allow(site, e.w.start); ok {
			a.reports = append(a.reports, a.report(e, all, fs, dropped))
		}
	}
	a.pending = a.pending[:0]
}

// neverBlocks are the system calls, by syscallName, that return without
// waiting for anything: such a call that took long was its thread waiting
// for a CPU (on its way back the goroutine must get a P again:
// runtime/proc.go, exitsyscall), which is not a wait.
var neverBlocks = map[string]bool{
	"clock_gettime": true, "clock_getres": true, "gettimeofday": true, "time": true,
	"getpid": true, "gettid": true, "getppid": true, "getuid": true, "geteuid": true,
	"getgid": true, "getegid": true, "getrusage": true, "uname": true, "sched_yield": true,
}

// notWaiting are the runtime's block reasons (traceBlockReasonStrings in
// runtime/traceruntime.go) that are no wait of the app's: the goroutine
// was stopped to run the scheduler or the collector, and would have run.
var notWaiting = map[string]bool{
	"preempted": true, "runtime.Gosched": true, "GC mark assist wait for work": true,
	"wait until GC ends": true, "wait for debug call": true,
}

// report makes the report of e, whose stack is all, fs from its call
// site.
func (a *analyzer) report(e ended, all, fs []runtime.Frame, dropped int) Report {
	w := e.w
	r := Report{Start: a.wall(w.start), Duration: e.end.Sub(w.start), Wait: w.reason, Stack: fs, Ongoing: e.ongoing, Dropped: dropped}
	if w.syscall {
		r.Wait = waitSyscall
		r.Syscall, r.Path = a.files(int64(w.thread), a.mono(w.start), a.mono(e.end))
		if r.Syscall == "" {
			r.Syscall = syscallName(all, a.goos)
		}
	}
	return r
}

// idleWait reports whether w, whose stack from its call site is fs, is
// the goroutine's idle wait.
func (a *analyzer) idleWait(w *wait, fs []runtime.Frame) bool {
	if a.framed {
		return !w.inFrame
	}
	return len(fs) > 0 && a.idle[fs[0].Function]
}

// wall converts a trace time to the wall clock.
func (a *analyzer) wall(t trace.Time) time.Time {
	if a.clock == nil {
		return time.Now().Add(-a.now.Sub(t))
	}
	return a.clock.Wall.Add(t.Sub(a.clock.Trace))
}

// mono converts a trace time to the monotonic clock, in nanoseconds.
func (a *analyzer) mono(t trace.Time) int64 {
	if a.clock == nil {
		return int64(t)
	}
	return int64(a.clock.Mono) + int64(t.Sub(a.clock.Trace))
}

// A limiter keeps to one report per call site per perSite, counting the
// others.
type limiter map[uint64]*siteCount

type siteCount struct {
	last    trace.Time // start of the wait last reported
	dropped int        // waits left out since
}

// allow reports whether a wait at site that began at t may be reported,
// and how many were left out before it.
func (l limiter) allow(site uint64, t trace.Time) (dropped int, ok bool) {
	c := l[site]
	if c == nil {
		l[site] = &siteCount{last: t}
		return 0, true
	}
	if t.Sub(c.last) < perSite {
		c.dropped++
		return 0, false
	}
	dropped, c.dropped, c.last = c.dropped, 0, t
	return dropped, true
}
