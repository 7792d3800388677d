package flush

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"
)

// DefaultTimeout is the deadline [New] uses for a zero or negative timeout.
const DefaultTimeout = 2 * time.Second

// Flusher is anything that can push its pending writes to the disk and wait
// for them until ctx ends. statefile.Store, statefile.File, drafts.Store and
// anchors.Store implement it.
type Flusher interface {
	Flush(ctx context.Context) error
}

// PathOwner is a [Flusher] that owns one file: its Flush waits for that
// file and reports its failure. drafts.Store, anchors.Store and
// statefile.File implement it. Path returns the file's path.
type PathOwner interface {
	Flusher
	Path() string
}

// ExceptFlusher is a [Flusher] of many files that can flush all of them
// but some: FlushExcept is Flush that neither waits for nor reports the
// listed paths. statefile.Store implements it.
type ExceptFlusher interface {
	Flusher
	FlushExcept(ctx context.Context, except ...string) error
}

// Func adapts a plain function to [Flusher].
type Func func(ctx context.Context) error

// Flush calls f(ctx).
func (f Func) Flush(ctx context.Context) error { return f(ctx) }

// Hook flushes a set of [Flusher]s under one deadline. Its methods are safe
// for concurrent use. The zero Hook is ready to use with DefaultTimeout.
type Hook struct {
	timeout time.Duration

	mu      sync.Mutex // protects items and running
	items   []entry
	running *call // the Run under way, which a Run called meanwhile joins; nil when none is

	// Seams for tests; nil means the real thing (see the methods below).
	exit     func(code int)                             // os.Exit
	stderr   io.Writer                                  // os.Stderr
	notify   func(c chan<- os.Signal, sig ...os.Signal) // signal.Notify
	unnotify func(c chan<- os.Signal)                   // signal.Stop
	ignored  func(sig os.Signal) bool                   // signal.Ignored
}

type entry struct {
	name string
	f    Flusher
}

// call is one Run under way: every Run called before it ends returns its
// report.
type call struct {
	names []string      // the items' names, for a joining Run that gives up
	done  chan struct{} // closed once r is set
	r     Report
}

// New returns a Hook whose [Hook.Run] gives all flushers together at most
// timeout. Zero or negative: DefaultTimeout (2s).
func New(timeout time.Duration) *Hook {
	return &Hook{timeout: timeout}
}

// Add registers f under name (a label for the [Report]; names need not be
// unique). Flushers added while a Run is under way take part in the next Run.
// Add panics if f is nil.
//
// Add every store the app saves through: a drafts.Store or anchors.Store
// holds the last edits in memory until they settle, so adding only the
// statefile.Store they save through would not flush those edits. Added
// together, each file is reported once, under the item that owns it: see
// [PathOwner] and [ExceptFlusher].
func (h *Hook) Add(name string, f Flusher) {
	if f == nil {
		panic("flush: Add of a nil Flusher")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.items = append(h.items, entry{name: name, f: f})
}

// Run flushes every added Flusher in parallel under one deadline, the Hook's
// timeout from now, and returns when all have returned or the deadline
// passed, whichever is first. It can be called more than once. A Run called
// while another is under way (a toolkit's quit path and [Hook.Notify]'s
// signal, both at once) starts no second flush: it waits for that one and
// returns its report.
//
// Each file is reported under the item that owns it. When the Hook holds a
// [PathOwner] (a drafts.Store) and an [ExceptFlusher] (the statefile.Store
// it saves through), Run calls FlushExcept with the owners' paths, so the
// owner's item alone waits for its file and reports its failure.
//
// Each Flusher runs on its own goroutine, which ends when its Flush returns.
// A Flusher that ignores its context (a write stuck in the kernel) does not
// hold Run past the deadline (plus [Grace]): Run reports it as not drained
// and returns, and that goroutine ends whenever the Flush finally returns. In
// a quitting process that is at exit.
//
// Run closes nothing: every store stays usable, so Run can also serve as a
// checkpoint. A process that exits after Run, as [Hook.Notify]'s does, need
// not Close its stores: once Run reports them drained their data is on the
// disk, and what Close adds (refusing new work, ending watches, releasing
// statefile's Exclusive locks) the process's exit does as well. Close them
// after Run only when the process goes on.
func (h *Hook) Run() Report {
	return h.RunContext(context.Background())
}

// RunContext is [Hook.Run] with a parent context: it returns when ctx ends
// too, so the deadline is the earlier of ctx's and the Hook's timeout. Use it
// when the quit path has a deadline of its own (a service manager's stop
// timeout). Do not pass a toolkit's app context that may already be
// canceled at quit (the package's Wails snippet calls Run for that reason):
// Run would give up at once and drain nothing. A RunContext that joins a
// Run under way and whose ctx ends first reports every item as still
// flushing, with ctx's error.
func (h *Hook) RunContext(ctx context.Context) Report {
	start := time.Now()
	h.mu.Lock()
	if c := h.running; c != nil {
		h.mu.Unlock()
		return c.wait(ctx, start)
	}
	items := slices.Clone(h.items)
	c := &call{done: make(chan struct{}), names: make([]string, len(items))}
	for i, e := range items {
		c.names[i] = e.name
	}
	h.running = c
	h.mu.Unlock()

	c.r = h.run(ctx, start, items)
	h.mu.Lock()
	h.running = nil
	h.mu.Unlock()
	close(c.done)
	return c.r.clone()
}

// wait is a Run that joined c: it returns c's report, or, if ctx ends
// first, every item as still flushing.
func (c *call) wait(ctx context.Context, start time.Time) Report {
	select {
	case <-c.done:
		return c.r.clone()
	case <-ctx.Done():
	}
	r := Report{Took: time.Since(start), Items: make([]Item, len(c.names))}
	for i, name := range c.names {
		r.Items[i] = Item{Name: name, Err: fmt.Errorf("flush: still flushing at the deadline: %w", ctx.Err())}
	}
	return r
}

// run is one flush of items, the first Run's.
func (h *Hook) run(ctx context.Context, start time.Time, items []entry) Report {
	ctx, cancel := context.WithTimeout(ctx, h.deadline())
	defer cancel()
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

func (h *Hook) deadline() time.Duration {
	if h.timeout <= 0 {
		return DefaultTimeout
	}
	return h.timeout
}

func (h *Hook) exitFunc() func(int) {
	if h.exit != nil {
		return h.exit
	}
	return os.Exit
}

func (h *Hook) errOut() io.Writer {
	if h.stderr != nil {
		return h.stderr
	}
	return os.Stderr
}

func (h *Hook) signalFuncs() (func(chan<- os.Signal, ...os.Signal), func(chan<- os.Signal), func(os.Signal) bool) {
	if h.notify != nil {
		ignored := h.ignored
		if ignored == nil {
			ignored = func(os.Signal) bool { return false }
		}
		return h.notify, h.unnotify, ignored
	}
	return signal.Notify, signal.Stop, signal.Ignored
}
