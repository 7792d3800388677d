package flush

import (
	"context"
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
// returns its report. If that one ended on an earlier deadline than the
// joining Run's own (a RunContext with a shorter budget) with items not
// drained, the joining Run flushes again in the time its own deadline
// leaves and returns that report: a Run never gets less time than its own.
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
	ctx, cancel := context.WithTimeout(ctx, h.deadline())
	defer cancel()
	for {
		h.mu.Lock()
		c := h.running
		if c == nil {
			break
		}
		h.mu.Unlock()
		r, ok := c.wait(ctx, start)
		if !ok || r.Drained || !c.endedBefore(ctx) {
			return r
		}
		// The run joined ended on a deadline earlier than this one's with
		// items not drained (a quit path's short budget of its own): flush
		// again in the time left, so this Run's report is its own.
	}
	items := slices.Clone(h.items)
	dl, _ := ctx.Deadline() // set: WithTimeout above
	c := &call{done: make(chan struct{}), names: make([]string, len(items)), deadline: dl}
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
