// Package flush is the quit-time hook: one shared deadline over everything
// that must reach the disk before the process exits.
//
// Register each store with [Hook.Add], then call [Hook.Run] from the
// toolkit's quit path, or let [Hook.Notify] call it on SIGINT, SIGTERM or
// SIGHUP. Run flushes every store in parallel and returns by the deadline even
// when a disk write never finishes, with a [Report] that says what drained and
// names what did not. statefile.Store, drafts.Store and anchors.Store all
// satisfy [Flusher].
//
// The order at start-up: make the Hook first and Add each store right after
// making it (statefile.NewStore, drafts.Open), before its first Save, and
// the app's agents as flush.Func(group.Stop) (qos.Group) before the first
// one starts; call Notify once the Hook exists. A signal runs only what was
// added by then, and Notify exits the process when Run returns, so nothing
// after it runs: whatever must happen at quit belongs in the Hook. Run
// closes nothing (see [Hook.Run]).
//
// Why a deadline: Chromium's ImportantFileWriter blocks shutdown on a pending
// write with no limit, Firefox's AsyncShutdown crashes the browser after 60 s
// (toolkit/components/asyncshutdown), and Android's QueuedWork.waitToFinish
// stalls an activity's stop into an ANR. A desktop app should instead give the
// disk a short, fixed time, then exit and say what was lost.
//
// # Toolkits
//
// None of these makes a toolkit a dependency of this module; they are the
// lines to put in an app. Fyne: the last moment to save is the lifecycle's
// stop callback.
//
//	a := app.New()
//	a.Lifecycle().SetOnStopped(func() { log.Print(hook.Run()) })
//	stop := hook.Notify() // Ctrl-C in a terminal, SIGTERM at logout
//	defer stop()
//	a.NewWindow("Agent").ShowAndRun()
//
// Wails v2: OnShutdown runs after the frontend is gone, just before the
// process ends; Run has its own deadline, so do not tie it to the app's ctx.
// To flush while the window is still on screen, use OnBeforeClose instead (a
// later Run then returns at once).
//
//	wails.Run(&options.App{
//		OnShutdown: func(ctx context.Context) { log.Print(hook.Run()) },
//	})
//
// Gio: the window's DestroyEvent.
//
//	for {
//		switch e := w.Event().(type) {
//		case app.DestroyEvent:
//			log.Print(hook.Run())
//			return e.Err
//		case app.FrameEvent:
//			// lay out and draw
//		}
//	}
//
// A daemon that decides its exit itself, instead of [Hook.Notify]:
//
//	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer cancel()
//	serve(ctx, st)
//	if r := hook.Run(); !r.Drained {
//		log.Print(r)
//		os.Exit(1)
//	}
//
// # Stability
//
// The module is v0, so the API may still change; each change is listed in
// the repository's CHANGELOG.md. What no v0 or v1 release will change: Run
// returns by its deadline even when a Flusher never does, and its Report
// has one Item per Add, in Add order, saying whether it drained and, if
// not, why. What may change: the short grace after the deadline, the text
// of Report.String, and the signals Notify handles.
package flush

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"
)

// DefaultTimeout is the deadline [New] uses for a zero or negative timeout.
const DefaultTimeout = 2 * time.Second

// Flusher is anything that can push its pending writes to the disk and wait
// for them until ctx ends. statefile.Store, drafts.Store and anchors.Store
// implement it.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Func adapts a plain function to [Flusher].
type Func func(ctx context.Context) error

// Flush calls f(ctx).
func (f Func) Flush(ctx context.Context) error { return f(ctx) }

// Hook flushes a set of [Flusher]s under one deadline. Its methods are safe
// for concurrent use. The zero Hook is ready to use with DefaultTimeout.
type Hook struct {
	timeout time.Duration

	mu    sync.Mutex // protects items
	items []entry

	// Seams for tests; nil means the real thing (see the methods below).
	exit     func(code int)                             // os.Exit
	stderr   io.Writer                                  // os.Stderr
	notify   func(c chan<- os.Signal, sig ...os.Signal) // signal.Notify
	unnotify func(c chan<- os.Signal)                   // signal.Stop
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
// passed, whichever is first. It can be called more than once.
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
// canceled at quit (the README's Wails snippet calls Run for that reason):
// Run would give up at once and drain nothing.
func (h *Hook) RunContext(ctx context.Context) Report {
	start := time.Now()
	h.mu.Lock()
	items := append([]entry(nil), h.items...)
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, h.deadline())
	defer cancel()
	// Buffered for all, so a Flusher that returns after Run gave up can
	// still deliver its result and let its goroutine end.
	done := make(chan result, len(items))
	for i, e := range items {
		go flushOne(ctx, i, e.f, done)
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

type result struct {
	i   int
	err error
}

// flushOne runs one Flusher and delivers its result. A panic becomes the
// item's error, so one broken store does not crash the quit of the others.
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

func (h *Hook) signalFuncs() (func(chan<- os.Signal, ...os.Signal), func(chan<- os.Signal)) {
	if h.notify != nil {
		return h.notify, h.unnotify
	}
	return signal.Notify, signal.Stop
}
