package flush

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Run flushes every saver in parallel under one deadline, the Hook's
// Timeout from now, and returns when all have returned or the deadline
// passed, whichever is first, with a [Report] that has one Item per
// [Hook.Add], in Add order. It stops nothing and closes nothing: every
// store stays usable and the stoppers keep running, so Run serves as the
// save before a "not saved, quit anyway?" prompt that the person may
// answer with "stay", and as a checkpoint. A Run called while another is
// under way starts no second flush: it returns that one's report.
//
// Each saver runs on its own goroutine, which ends when its Flush
// returns. A saver that ignores its context (a write stuck in the kernel)
// does not hold Run past the deadline (plus a few milliseconds, for savers
// that give up at the deadline to say what is pending): Run reports it not
// drained and returns, and that goroutine ends whenever the Flush finally
// returns.
func (h *Hook) Run() Report { return h.do(false) }

// Exit is the app's exit: it flushes every saver, as Run does, and runs
// every stopper ([Hook.AddStop]), all in parallel under one deadline, and
// returns the Report, with one Item per Add and AddStop, in their order.
// Call it once the app has decided to exit (the person confirmed, or
// nothing was left unsaved), from the toolkit's quit path; [Hook.Notify]
// calls it for a signal. An Exit called while another is under way (the
// toolkit's quit and a signal at once) joins it: one exit, one report, and
// each stopper called once. If that one ended on its deadline with items
// not drained while this one's own deadline leaves time, it uses that
// time: it flushes again the savers that did not drain, and waits for the
// stoppers still running, so an Exit never gets less than its own
// deadline.
//
// A process that exits after Exit need not Close its stores: once the
// Report says Saved their data is on the disk, and what Close adds
// (refusing new work, ending watches, releasing statefile's Exclusive
// locks) the process's exit does as well.
func (h *Hook) Exit() Report { return h.do(true) }

// do is Run (exit false) or Exit.
func (h *Hook) do(exit bool) Report {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout())
	defer cancel()
	k := 0
	if exit {
		k = 1
	}
	var prev *call
	for {
		h.mu.Lock()
		c := h.running[k]
		if c == nil {
			break
		}
		h.mu.Unlock()
		r, ok := c.wait(ctx, start)
		if !ok || r.drained() || !c.endedBefore(ctx) {
			return r
		}
		// The call joined ended on a deadline earlier than this one's with
		// items not drained: go on with them in the time left, so this
		// one's report is its own.
		prev = c
	}
	c := &call{done: make(chan struct{})}
	c.deadline, _ = ctx.Deadline() // set: WithTimeout above
	for i, e := range h.items {
		if exit || !e.stop {
			c.tasks = append(c.tasks, prev.carry(i, e))
		}
	}
	h.running[k] = c
	h.mu.Unlock()

	c.r = run(ctx, start, c.tasks)
	h.mu.Lock()
	h.running[k] = nil
	h.mu.Unlock()
	close(c.done)
	return c.r.clone()
}

// call is one Run or Exit under way: every one of its kind called before
// it ends returns its report, or goes on after it if the call ended sooner
// than it may (see endedBefore).
type call struct {
	tasks    []*task       // what it runs
	deadline time.Time     // the call's own deadline
	done     chan struct{} // closed once r is set
	r        Report
}

// task is one Flusher's part in a call, and in the calls that go on after
// it (see carry).
type task struct {
	pos     int // the entry's index in Hook.items
	e       entry
	started bool
	done    chan struct{} // closed once the Flusher returned and err is set
	err     error
}

// carry returns the task for entry e, at index pos, of a call that goes
// on after c (nil: after none). A task of c that drained, and any stopper
// of c, whether it returned or still runs, is taken over as it is: a
// stopper is called once per exit, since ending a program twice is no
// safer than once. A saver that did not drain gets a new task, flushed
// again with the new call's deadline.
func (c *call) carry(pos int, e entry) *task {
	if c != nil {
		for _, t := range c.tasks {
			if t.pos == pos && (e.stop || t.drained()) {
				return t
			}
		}
	}
	return &task{pos: pos, e: e, done: make(chan struct{})}
}

// drained reports whether t's Flusher returned nil.
func (t *task) drained() bool {
	select {
	case <-t.done:
		return t.err == nil
	default:
		return false
	}
}

// wait is a call that joined c: it returns c's report and true, or, if ctx
// ends first, every item as still running and false.
func (c *call) wait(ctx context.Context, start time.Time) (Report, bool) {
	select {
	case <-c.done:
		return c.r.clone(), true
	case <-ctx.Done():
		select {
		case <-c.done: // it ended as ctx did: its report counts
			return c.r.clone(), true
		default:
		}
	}
	r := Report{Took: time.Since(start), Items: make([]Item, len(c.tasks))}
	for i, t := range c.tasks {
		r.Items[i] = Item{Name: t.e.name, Stop: t.e.stop, Err: stillRunning(ctx)}
	}
	r.tally()
	return r, false
}

// endedBefore reports whether c's deadline came before ctx's, with time of
// ctx's left: a call joining c may go on after it then.
func (c *call) endedBefore(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() == nil && (!ok || c.deadline.Before(dl))
}

// run starts the tasks not started yet and collects every task's outcome.
func run(ctx context.Context, start time.Time, tasks []*task) Report {
	r := Report{Items: make([]Item, len(tasks))}
	for i, t := range tasks {
		r.Items[i] = Item{Name: t.e.name, Stop: t.e.stop}
		if !t.started {
			t.started = true
			go t.flush(ctx)
		}
	}
	collect(ctx, tasks, r.Items)
	r.Took = time.Since(start)
	r.tally()
	return r
}

// flush runs t's Flusher and records its result. A panic becomes the
// item's error, so one broken store does not crash the exit of the others.
// The goroutine that runs it ends when the Flusher returns.
func (t *task) flush(ctx context.Context) {
	err := errPanicked
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", errPanicked, v)
		}
		t.err = err
		close(t.done)
	}()
	err = t.e.f.Flush(ctx)
}

var errPanicked = errors.New("flush: Flush panicked")

// grace is how long a call waits after the deadline for flushers that
// honour their context to return: they return at the deadline with an
// error that says what is pending (a *statefile.NotDrainedError lists the
// paths), and that error is worth a few milliseconds more than "still
// running".
const grace = 10 * time.Millisecond

// collect fills items from tasks once every task's Flusher returned, or
// ctx ended and grace passed; the ones still running then get an error
// wrapping ctx's.
func collect(ctx context.Context, tasks []*task, items []Item) {
	deadline := ctx.Done()
	var graceOver <-chan time.Time // set once the deadline passed
	over := false
	for i, t := range tasks {
	wait:
		for !over {
			select {
			case <-t.done:
				break wait
			case <-deadline:
				deadline = nil
				tm := time.NewTimer(grace)
				defer tm.Stop()
				graceOver = tm.C
			case <-graceOver:
				over = true
			}
		}
		select {
		case <-t.done:
			items[i].Err = t.err
		default:
			items[i].Err = stillRunning(ctx)
		}
	}
}

func stillRunning(ctx context.Context) error {
	return fmt.Errorf("flush: still running at the deadline: %w", ctx.Err())
}

// clone returns r with Items of its own, for each call that returns it.
func (r Report) clone() Report {
	r.Items = slices.Clone(r.Items)
	return r
}
