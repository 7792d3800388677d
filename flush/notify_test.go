package flush

import (
	"bytes"
	"os"
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
	mu      sync.Mutex // protects the fields below
	c       chan<- os.Signal
	sigs    []os.Signal
	stopped bool
	out     bytes.Buffer  // the hook's standard error
	exits   chan exitCall // one per exit call
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
		f.c, f.sigs = c, sig
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
		h := New(time.Second)
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
		h := New(time.Second)
		f := install(h)
		h.Add("state", after(40*time.Millisecond, nil))
		stop := h.Notify(syscall.SIGTERM)
		defer stop()
		start := time.Now()
		f.send(syscall.SIGTERM)
		e := <-f.exits
		assert.Equal(t, 128+15, e.code, "exit status: got, want 128+SIGTERM")
		assert.Equal(t, 40*time.Millisecond, e.at.Sub(start), "exit once the flush drained")
		assert.Equal(t, "flush: terminated: drained 1/1 in 40ms\n", f.stderr())
	})
}

// TestNotifyStuckDisk: the exit comes at the deadline even though a flusher
// never returns, and the printed report names it.
func TestNotifyStuckDisk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		h := New(250 * time.Millisecond)
		f := install(h)
		h.Add("/state/drafts.json", stuck(release))
		stop := h.Notify()
		defer stop()
		start := time.Now()
		f.send(syscall.SIGINT)
		e := <-f.exits
		assert.Equal(t, 130, e.code)
		assert.Equal(t, 250*time.Millisecond+Grace, e.at.Sub(start), "exit at the deadline plus Grace")
		assert.Contains(t, f.stderr(), "flush: interrupt: drained 0/1 in 260ms; not drained: /state/drafts.json: ")
	})
}

func TestNotifySecondSignalExitsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		h := New(2 * time.Second)
		f := install(h)
		h.Add("stuck", stuck(release))
		stop := h.Notify()
		defer stop()
		start := time.Now()
		f.send(syscall.SIGTERM)
		wait := time.NewTimer(100 * time.Millisecond)
		<-wait.C
		require.Empty(t, f.exits, "exited before the deadline on one signal")
		f.send(syscall.SIGINT)
		e := <-f.exits
		assert.Equal(t, 130, e.code, "second signal's status")
		assert.Equal(t, 100*time.Millisecond, e.at.Sub(start), "no wait after the second signal")
		assert.Equal(t, "flush: interrupt: second signal, exiting without waiting for the disk\n", f.stderr())
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
		assert.Equal(t, tt.want, ExitCode(tt.sig), "ExitCode(%v)", tt.sig)
	}
}

type otherSignal struct{}

func (otherSignal) String() string { return "other" }
func (otherSignal) Signal()        {}
