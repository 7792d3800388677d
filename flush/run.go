package flush

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// call is one Run under way: every Run called before it ends returns its
// report, or flushes again if the call ended sooner than it may (see
// endedBefore).
type call struct {
	names    []string      // the items' names, for a joining Run that gives up
	deadline time.Time     // the call's own deadline: its ctx's, or its start plus the Hook's timeout
	done     chan struct{} // closed once r is set
	r        Report
}

// wait is a Run that joined c: it returns c's report and true, or, if ctx
// ends first, every item as still flushing and false.
func (c *call) wait(ctx context.Context, start time.Time) (Report, bool) {
	select {
	case <-c.done:
		return c.r.clone(), true
	case <-ctx.Done():
	}
	r := Report{Took: time.Since(start), Items: make([]Item, len(c.names))}
	for i, name := range c.names {
		r.Items[i] = Item{Name: name, Err: fmt.Errorf("flush: still flushing at the deadline: %w", ctx.Err())}
	}
	return r, false
}

// endedBefore reports whether c's deadline came before ctx's, with time of
// ctx's left: a Run joining c may flush again then.
func (c *call) endedBefore(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() == nil && (!ok || c.deadline.Before(dl))
}

// run is one flush of items, the first Run's.
func (h *Hook) run(ctx context.Context, start time.Time, items []entry) Report {
	owned := ownedPaths(items)
	// Buffered for all, so a Flusher that returns after Run gave up can
	// still deliver its result and let its goroutine end.
	done := make(chan result, len(items))
	for i, e := range items {
		go flushOne(ctx, i, e.f, owned, done)
	}
	r := Report{Drained: true, Items: make([]Item, len(items))}
	for i, e := range items {
		r.Items[i] = Item{Name: e.name}
	}
	collect(ctx, done, r.Items)
	for _, it := range r.Items {
		r.Drained = r.Drained && it.Drained
	}
	r.Took = time.Since(start)
	return r
}

// ownedPaths returns the paths of the items that are [PathOwner]s.
func ownedPaths(items []entry) []string {
	var paths []string
	for _, e := range items {
		if o, ok := e.f.(PathOwner); ok {
			paths = append(paths, o.Path())
		}
	}
	return paths
}

type result struct {
	i   int
	err error
}

// flushOne runs one Flusher and delivers its result. An [ExceptFlusher]
// leaves out the paths other items own. A panic becomes the item's error,
// so one broken store does not crash the quit of the others.
func flushOne(ctx context.Context, i int, f Flusher, owned []string, done chan<- result) {
	err := errPanicked
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", errPanicked, v)
		}
		done <- result{i: i, err: err}
	}()
	if ef, ok := f.(ExceptFlusher); ok && len(owned) > 0 {
		if o, ok := f.(PathOwner); ok { // it owns a path itself: flush that one
			owned = slices.DeleteFunc(slices.Clone(owned), func(p string) bool { return p == o.Path() })
		}
		err = ef.FlushExcept(ctx, owned...)
		return
	}
	err = f.Flush(ctx)
}

var errPanicked = errors.New("flush: Flush panicked")

// Grace is how long Run waits after the deadline for flushers that honour
// their context to return: they return at the deadline with an error that
// says what is pending (a *statefile.NotDrainedError lists the paths), and
// that error is worth a few milliseconds more than "still flushing".
const Grace = 10 * time.Millisecond

// collect fills items from done until every Flusher returned, or ctx ended
// and Grace passed; the ones still running then get an error wrapping ctx's.
func collect(ctx context.Context, done <-chan result, items []Item) {
	returned := make([]bool, len(items))
	var grace <-chan time.Time // nil, so never ready, until the deadline
	deadline := ctx.Done()
	for left := len(items); left > 0; {
		select {
		case res := <-done:
			returned[res.i] = true
			items[res.i].Err = res.err
			items[res.i].Drained = res.err == nil
			left--
		case <-deadline:
			deadline = nil
			t := time.NewTimer(Grace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			for i := range items {
				if !returned[i] {
					items[i].Err = fmt.Errorf("flush: still flushing at the deadline: %w", ctx.Err())
				}
			}
			return
		}
	}
}
