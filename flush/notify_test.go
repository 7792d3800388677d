package flush

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSignals stands in for os/signal inside a synctest bubble: real signal
// delivery comes from outside the bubble, which synctest forbids.
type fakeSignals struct {
	mu       sync.Mutex // protects the fields below
	c        chan<- os.Signal
	sigs     []os.Signal
	notified bool        // notify was called
	ignored  []os.Signal // what signal.Ignored reports as ignored
	stopped  bool
	out      bytes.Buffer  // the hook's standard error
	exits    chan exitCall // one per exit call
}

type exitCall struct {
	code int
	at   time.Time
}

func install(h *Hook) *fakeSignals {
	f := &fakeSignals{exits: make(chan exitCall, 4)}
	h.notify = func(c chan<- os.Signal, sig ...os.Signal) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.c, f.sigs, f.notified = c, sig, true
	}
	h.ignored = func(s os.Signal) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.Contains(f.ignored, s)
	}
	h.unnotify = func(c chan<- os.Signal) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stopped = true
	}
	h.exit = func(code int) { f.exits <- exitCall{code: code, at: time.Now()} }
	h.stderr = &lockedWriter{mu: &f.mu, w: &f.out}
	return f
}

func (f *fakeSignals) send(s os.Signal) {
	f.mu.Lock()
	c := f.c
	f.mu.Unlock()
	c <- s
}

func (f *fakeSignals) stderr() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestNotifyDefaultSignals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{Timeout: time.Second})
		f := install(h)
		stop := h.Notify()
		assert.Equal(t, []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}, f.sigs)
		stop()
		stop() // harmless
		assert.True(t, f.stopped, "stop must unregister the signals")
		assert.Empty(t, f.exits, "no signal, no exit")
	})
}

func TestNotifyFlushesThenExits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{Timeout: time.Second})
		f := install(h)
		h.Add("state", after(40*time.Millisecond, nil))
		stop := h.Notify(syscall.SIGTERM)
		defer stop()
		start := time.Now()
		f.send(syscall.SIGTERM)
		e := <-f.exits
		assert.Equal(t, 128+15, e.code, "exit status: got, want 128+SIGTERM")
		assert.Equal(t, 40*time.Millisecond, e.at.Sub(start), "exit once the flush drained")
		assert.Equal(t, "flush: terminated: saved 1/1 in 40ms\n", f.stderr())
	})
}

// TestNotifyStuckDisk: the exit comes at the deadline even though a flusher
// never returns, and the printed report names it.
func TestNotifyStuckDisk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		h := New(Options{Timeout: 250 * time.Millisecond})
		f := install(h)
		h.Add("/state/drafts.json", stuck(release))
		stop := h.Notify()
		defer stop()
		start := time.Now()
		f.send(syscall.SIGINT)
		e := <-f.exits
		assert.Equal(t, 130, e.code)
		assert.Equal(t, 250*time.Millisecond+grace, e.at.Sub(start), "exit at the deadline plus grace")
		assert.Contains(t, f.stderr(), "flush: interrupt: saved 0/1 in 260ms\n  /state/drafts.json: flush: still running at the deadline")
	})
}

// TestNotifySecondSignalExitsAtOnce: Ctrl-C, Ctrl-C gives up waiting for
// the disk.
func TestNotifySecondSignalExitsAtOnce(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				h := New(Options{Timeout: 2 * time.Second})
				f := install(h)
				h.Add("stuck", stuck(release))
				stop := h.Notify(os.Interrupt, syscall.SIGQUIT)
				defer stop()
				start := time.Now()
				f.send(sig)
				wait := time.NewTimer(100 * time.Millisecond)
				<-wait.C
				require.Empty(t, f.exits, "exited before the deadline on one signal")
				f.send(sig)
				e := <-f.exits
				assert.Equal(t, exitCode(sig), e.code, "second signal's status")
				assert.Equal(t, 100*time.Millisecond, e.at.Sub(start), "no wait after the second signal")
				assert.Equal(t, "flush: "+sig.String()+": second signal, exiting without waiting for the disk\n", f.stderr())
			})
		})
	}
}

// TestNotifyOtherSecondSignalWaits: a logout's SIGTERM then SIGHUP, a
// service manager's repeated SIGTERM, or a hangup after Ctrl-C, does not
// cut the flush short: the exit comes when Run returns, with the first
// signal's status.
func TestNotifyOtherSecondSignalWaits(t *testing.T) {
	for _, tt := range []struct{ first, second os.Signal }{
		{syscall.SIGTERM, syscall.SIGHUP},
		{syscall.SIGTERM, syscall.SIGTERM},
		{syscall.SIGHUP, syscall.SIGTERM},
		{syscall.SIGHUP, syscall.SIGHUP},
		{os.Interrupt, syscall.SIGHUP},
		{syscall.SIGTERM, os.Interrupt},
	} {
		t.Run(fmt.Sprintf("%v then %v", tt.first, tt.second), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := New(Options{Timeout: 2 * time.Second})
				f := install(h)
				h.Add("state", after(time.Second, nil))
				stop := h.Notify()
				defer stop()
				start := time.Now()
				f.send(tt.first)
				wait := time.NewTimer(100 * time.Millisecond)
				<-wait.C
				f.send(tt.second)
				e := <-f.exits
				assert.Equal(t, exitCode(tt.first), e.code, "exit status: got, want the first signal's")
				assert.Equal(t, time.Second, e.at.Sub(start), "exit once the flush drained, not at the second signal")
				want := fmt.Sprintf("flush: %v while quitting on %v: went on to the end\n"+
					"flush: %v: saved 1/1 in 1s\n", tt.second, tt.first, tt.first)
				assert.Equal(t, want, f.stderr())
			})
		})
	}
}

// TestNotifyLeavesIgnoredSignals: a signal ignored at Notify (nohup's
// SIGHUP) is not caught, so it stays ignored.
func TestNotifyLeavesIgnoredSignals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{Timeout: time.Second})
		f := install(h)
		f.ignored = []os.Signal{syscall.SIGHUP}
		stop := h.Notify()
		assert.Equal(t, []os.Signal{os.Interrupt, syscall.SIGTERM}, f.sigs, "caught: got, want all but the ignored")
		stop()

		h = New(Options{Timeout: time.Second})
		f = install(h)
		f.ignored = []os.Signal{syscall.SIGHUP}
		stop = h.Notify(syscall.SIGHUP)
		assert.False(t, f.notified, "with every listed signal ignored, signal.Notify must not be called: with none it catches all")
		stop()
		assert.False(t, f.stopped, "nothing to unregister")
	})
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		sig  os.Signal
		want int
	}{
		{os.Interrupt, 130},
		{syscall.SIGTERM, 143},
		{syscall.SIGHUP, 129},
		{otherSignal{}, 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, exitCode(tt.sig), "exitCode(%v)", tt.sig)
	}
}

type otherSignal struct{}

func (otherSignal) String() string { return "other" }
func (otherSignal) Signal()        {}

// TestNotifyStopsThenReports: a signal's exit runs the stoppers too (the
// agents, the toolkit's quit that restores the terminal), and writes the
// report only once they have returned, to Options.Output when set.
func TestNotifyStopsThenReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		h := New(Options{Timeout: time.Second, Output: &out})
		f := install(h)
		h.Add("state", after(10*time.Millisecond, nil))
		restored := false
		h.AddStop("ui", Func(func(context.Context) error {
			wait := time.NewTimer(50 * time.Millisecond) // the toolkit restores the terminal
			<-wait.C
			out.mu.Lock()
			restored = out.b.Len() == 0
			out.mu.Unlock()
			return nil
		}))
		stop := h.Notify()
		defer stop()
		f.send(syscall.SIGTERM)
		e := <-f.exits
		assert.Equal(t, 143, e.code)
		assert.True(t, restored, "the report was written before the toolkit's quit returned")
		assert.Equal(t, "flush: terminated: saved 1/1, stopped 1/1 in 50ms\n", out.String())
		assert.Empty(t, f.stderr(), "with Output set, nothing on standard error")
	})
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
