package flush

import (
	"context"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"
)

// Options configures a [Hook]. The zero value is the default for every
// field.
type Options struct {
	// Timeout is the one deadline a Run or an Exit gives all its items
	// together, from its start. Zero or negative means 2 s.
	Timeout time.Duration

	// Output gets what [Hook.Notify] writes: the [Report] of the exit a
	// signal caused, and a line for each signal that came during it. Nil
	// means standard error. A terminal app whose screen the toolkit owns
	// adds the toolkit's quit with [Hook.AddStop], so that the report is
	// written once the terminal is restored, or sends it to a log here.
	Output io.Writer
}

// defaultTimeout is Options.Timeout when zero.
const defaultTimeout = 2 * time.Second

// Flusher is anything that can push its pending writes to the disk, or
// end what it runs, and wait for that until ctx ends. statefile.Store,
// statefile.File, drafts.Store and anchors.Store implement it as savers; a
// qos.Group's Stop is a stopper, as Func(group.Stop).
type Flusher interface {
	Flush(ctx context.Context) error
}

// Func adapts a plain function to [Flusher].
type Func func(ctx context.Context) error

// Flush calls f(ctx).
func (f Func) Flush(ctx context.Context) error { return f(ctx) }

// Hook runs the app's savers, and at exit its stoppers, under one
// deadline. Its methods are safe for concurrent use. Make it with [New].
type Hook struct {
	opts Options

	mu      sync.Mutex // protects items and running
	items   []entry
	running [2]*call // the Run and the Exit under way, which one called meanwhile joins

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
	stop bool // a stopper: run by Exit only
}

// New returns a Hook with the given options.
func New(opts Options) *Hook {
	return &Hook{opts: opts}
}

// Add registers a saver under name, a label for the [Report]: something
// whose Flush puts what the app saved on the disk, such as a
// statefile.Store, a drafts.Store or an anchors.Store. Every [Hook.Run]
// and [Hook.Exit] flushes it. Add every store the app saves through: a
// drafts.Store or anchors.Store holds the last edits in memory until they
// settle, so adding only the statefile.Store they save through would not
// flush those edits. Savers added while a Run is under way take part in
// the next one. Add panics if f is nil.
func (h *Hook) Add(name string, f Flusher) { h.add(entry{name: name, f: f}) }

// AddStop registers a stopper under name: something the app ends only
// once it has decided to exit, such as its agents (Func(group.Stop) for a
// qos.Group) or a toolkit that must restore the terminal before the
// process ends (a Bubble Tea program's Quit, waiting for its Run to
// return). Only [Hook.Exit], and the exit a signal causes ([Hook.Notify]),
// run it; [Hook.Run] never does, so a quit the person cancels after a
// failed save leaves it running. AddStop panics if stop is nil.
func (h *Hook) AddStop(name string, stop Flusher) { h.add(entry{name: name, f: stop, stop: true}) }

func (h *Hook) add(e entry) {
	if e.f == nil {
		panic("flush: Add of a nil Flusher")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.items = append(h.items, e)
}

func (h *Hook) timeout() time.Duration {
	if h.opts.Timeout <= 0 {
		return defaultTimeout
	}
	return h.opts.Timeout
}

func (h *Hook) exitFunc() func(int) {
	if h.exit != nil {
		return h.exit
	}
	return os.Exit
}

func (h *Hook) output() io.Writer {
	switch {
	case h.opts.Output != nil:
		return h.opts.Output
	case h.stderr != nil:
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
