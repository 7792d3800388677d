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
// toolkit's quit and a signal at once) joins it: one exit, one report. If
// that one ended on its deadline with items not drained while this one's
// own deadline leaves time, it runs them again in that time, so an Exit
// never gets less than its own deadline.
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
		// The exit joined ended on a deadline earlier than this one's with
		// items not drained: run them again in the time left, so this
		// one's report is its own.
	}
	var items []entry
	for _, e := range h.items {
		if exit || !e.stop {
			items = append(items, e)
		}
	}
	dl, _ := ctx.Deadline() // set: WithTimeout above
	c := &call{done: make(chan struct{}), items: items, deadline: dl}
	h.running[k] = c
	h.mu.Unlock()

	c.r = run(ctx, start, items)
	h.mu.Lock()
	h.running[k] = nil
	h.mu.Unlock()
	close(c.done)
	return c.r.clone()
}

// call is one Run or Exit under way: every one of its kind called before
// it ends returns its report, or runs again if the call ended sooner than
// it may (see endedBefore).
type call struct {
	items    []entry       // what it runs, for a joiner that gives up
	deadline time.Time     // the call's own deadline
	done     chan struct{} // closed once r is set
	r        Report
}

// wait is a call that joined c: it returns c's report and true, or, if ctx
// ends first, every item as still running and false.
func (c *call) wait(ctx context.Context, start time.Time) (Report, bool) {
	select {
	case <-c.done:
		return c.r.clone(), true
	case <-ctx.Done():
	}
	r := Report{Took: time.Since(start), Items: make([]Item, len(c.items))}
	for i, e := range c.items {
		r.Items[i] = Item{Name: e.name, Stop: e.stop, Err: stillRunning(ctx)}
	}
	r.tally()
	return r, false
}

// endedBefore reports whether c's deadline came before ctx's, with time of
// ctx's left: a call joining c may run again then.
func (c *call) endedBefore(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() == nil && (!ok || c.deadline.Before(dl))
}

// run is one flush of items.
func run(ctx context.Context, start time.Time, items []entry) Report {
	// Buffered for all, so a Flusher that returns after run gave up can
	// still deliver its result and let its goroutine end.
	done := make(chan result, len(items))
	for i, e := range items {
		go flushOne(ctx, i, e.f, done)
	}
	r := Report{Items: make([]Item, len(items))}
	for i, e := range items {
		r.Items[i] = Item{Name: e.name, Stop: e.stop}
	}
	collect(ctx, done, r.Items)
	r.Took = time.Since(start)
	r.tally()
	return r
}

type result struct {
	i   int
	err error
}

// flushOne runs one Flusher and delivers its result. A panic becomes the
// item's error, so one broken store does not crash the exit of the others.
func flushOne(ctx context.Context, i int, f Flusher, done chan<- result) {
	err := errPanicked
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", errPanicked, v)
		}
		done <- result{i: i, err: err}
	}()
	err = f.Flush(ctx)
}

var errPanicked = errors.New("flush: Flush panicked")

// grace is how long a call waits after the deadline for flushers that
// honour their context to return: they return at the deadline with an
// error that says what is pending (a *statefile.NotDrainedError lists the
// paths), and that error is worth a few milliseconds more than "still
// running".
const grace = 10 * time.Millisecond

// collect fills items from done until every Flusher returned, or ctx ended
// and grace passed; the ones still running then get an error wrapping
// ctx's.
func collect(ctx context.Context, done <-chan result, items []Item) {
	returned := make([]bool, len(items))
	var after <-chan time.Time // nil, so never ready, until the deadline
	deadline := ctx.Done()
	for left := len(items); left > 0; {
		select {
		case res := <-done:
			returned[res.i] = true
			items[res.i].Err = res.err
			left--
		case <-deadline:
			deadline = nil
			t := time.NewTimer(grace)
			defer t.Stop()
			after = t.C
		case <-after:
			for i := range items {
				if !returned[i] {
					items[i].Err = stillRunning(ctx)
				}
			}
			return
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
