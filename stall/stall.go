package stall

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	rtrace "runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/exp/trace"
)

// ErrRecorderInUse is returned by [Watch] when the process's flight
// recorder is taken: the app runs a [runtime/trace.FlightRecorder] of its
// own, or stall is already watching. runtime/trace allows one flight
// recorder at a time.
var ErrRecorderInUse = errors.New("stall: the flight recorder is in use")

// current is the watcher while one watches: Frame's one atomic load.
var current atomic.Pointer[watcher]

// period is the time between two passes over the trace.
const period = time.Second

// A watcher watches one goroutine. Its goroutine, run, owns the analyzer
// and the recorder's snapshots; the sampler runs on a goroutine of its
// own. stop ends both.
type watcher struct {
	opts Options
	fr   *rtrace.FlightRecorder
	an   analyzer
	smp  *sampler
	buf  bytes.Buffer
	bad  bool          // a pass failed to read the trace, and said so
	quit chan struct{} // closed by stop
	done chan struct{} // closed when run has returned
}

// Watch watches the calling goroutine, which must be the one that runs
// the UI, until stop is called, and reports each of its waits that lasts
// longer than the budget to opts.OnReport (see the package
// documentation). It reads OFFMAIN_STALL, which may turn watching off or
// on and set the budget; when it does not watch, it returns a stop that
// does nothing. stop is never nil, may be called from any goroutine and
// more than once, and returns once the waits that ended before it was
// called are reported and the watcher's goroutines and flight recorder
// have stopped. Watch fails with [ErrRecorderInUse] when the process's
// flight recorder is taken, and with an error naming the variable when
// OFFMAIN_STALL has a value it does not know.
func Watch(opts Options) (stop func(), err error) {
	opts, on, err := opts.resolve(os.Getenv(envVar))
	if err != nil || !on {
		return nop, err
	}
	w := newWatcher(opts, goroutineID())
	if !current.CompareAndSwap(nil, w) {
		return nop, fmt.Errorf("%w: stall is already watching", ErrRecorderInUse)
	}
	if err := w.fr.Start(); err != nil {
		current.Store(nil)
		return nop, fmt.Errorf("%w: %v", ErrRecorderInUse, err)
	}
	w.smp.start()
	go w.run()
	return sync.OnceFunc(w.stop), nil
}

func newWatcher(opts Options, g trace.GoID) *watcher {
	if opts.OnReport == nil {
		opts.OnReport = logReport
	}
	idle := map[string]bool{}
	for _, fn := range slices.Concat(toolkitIdle, opts.Idle) {
		idle[fn] = true
	}
	smp := newSampler(opts.Budget / 2)
	return &watcher{
		opts: opts,
		// MinAge keeps every generation since the last pass: a pass
		// that comes late still finds the events it has not seen.
		fr:   rtrace.NewFlightRecorder(rtrace.FlightRecorderConfig{MinAge: 2 * period, MaxBytes: 64 << 20}),
		an:   analyzer{g: g, budget: opts.Budget, idle: idle, goos: runtime.GOOS, files: smp.lookup, limit: limiter{}},
		smp:  smp,
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// run passes over the trace every period, and a last time at stop.
func (w *watcher) run() {
	defer close(w.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.pass(false)
		case <-w.quit:
			w.pass(true)
			return
		}
	}
}

// pass snapshots the recorder, analyses what is new and delivers the
// reports.
func (w *watcher) pass(final bool) {
	w.buf.Reset()
	_, err := w.fr.WriteTo(&w.buf)
	if err == nil {
		err = w.an.pass(w.buf.Bytes(), final)
	}
	if err != nil && !w.bad {
		// x/exp/trace reads the trace without a compatibility promise: a
		// Go release it cannot read is said once, not hidden.
		w.bad = true
		slog.Default().Error("stall: cannot read the execution trace; waits go unreported", "err", err)
	}
	for _, r := range w.an.reports {
		w.opts.OnReport(r)
	}
	w.an.reports = w.an.reports[:0]
}

func (w *watcher) stop() {
	close(w.quit)
	<-w.done
	w.smp.stop()
	w.fr.Stop()
	current.Store(nil)
}

// goroutineID returns the calling goroutine's ID, which the trace names
// it by, from the first line of its stack: "goroutine 18 [running]:"
// (runtime/traceback.go, goroutineheader).
func goroutineID() trace.GoID {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic("stall: cannot read the goroutine's ID from its stack: " + s)
	}
	return trace.GoID(id)
}
