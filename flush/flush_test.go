package flush

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/offmain/offmain/statefile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// after is a Flusher that drains after d of fake time, or fails with err.
// It honours ctx, as a well-behaved store does.
func after(d time.Duration, err error) Func {
	return func(ctx context.Context) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return err
		case <-ctx.Done():
			return fmt.Errorf("fake store: 1 path pending: %w", ctx.Err())
		}
	}
}

// stuck is a Flusher that ignores its context: a write stuck in the kernel.
// It returns only when release is closed.
func stuck(release <-chan struct{}) Func {
	return func(context.Context) error {
		<-release
		return nil
	}
}

func TestRunAllDrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{})
		h.Add("slow", after(900*time.Millisecond, nil))
		h.Add("fast", after(10*time.Millisecond, nil))
		h.Add("mid", after(500*time.Millisecond, nil))
		r := h.Run()
		assert.True(t, r.Saved)
		assert.True(t, r.Stopped, "nothing to stop")
		assert.Equal(t, 900*time.Millisecond, r.Took, "Took: flushers run in parallel, so the slowest one sets it")
		require.Len(t, r.Items, 3)
		for i, name := range []string{"slow", "fast", "mid"} {
			assert.Equal(t, Item{Name: name}, r.Items[i], "item %d, in Add order", i)
		}
		assert.Equal(t, "flush: saved 3/3 in 900ms", r.String())
	})
}

// TestRunStuckFlusher is the quit on a disk that never finishes: the hook
// returns at the deadline, reports the stuck item, and the stuck goroutine
// ends once its write returns.
func TestRunStuckFlusher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release) // the "disk" finishes after the test: the goroutine ends then
		h := New(Options{Timeout: 300 * time.Millisecond})
		h.Add("ok", after(time.Millisecond, nil))
		h.Add("stuck", stuck(release))
		h.Add("polite", after(time.Hour, nil))
		r := h.Run()
		assert.Equal(t, 300*time.Millisecond+grace, r.Took, "Took: got, want the deadline plus grace exactly")
		assert.False(t, r.Saved)
		require.Len(t, r.Items, 3)
		assert.NoError(t, r.Items[0].Err, "ok")
		for _, it := range r.Items[1:] {
			assert.ErrorIs(t, it.Err, context.DeadlineExceeded, it.Name)
		}
		assert.Contains(t, r.Items[2].Err.Error(), "1 path pending", "a flusher's own error is kept")
		assert.Equal(t, "flush: saved 1/3 in 310ms\n"+
			"  stuck: flush: still running at the deadline: context deadline exceeded\n"+
			"  polite: fake store: 1 path pending: context deadline exceeded", r.String())
	})
}

// TestRunPoliteAtDeadline: flushers that give up with their context are
// all heard, and Run needs no grace when nothing is stuck.
func TestRunPoliteAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{Timeout: 300 * time.Millisecond})
		for _, name := range []string{"a", "b", "c"} {
			h.Add(name, after(time.Hour, nil))
		}
		r := h.Run()
		assert.Equal(t, 300*time.Millisecond, r.Took)
		for _, it := range r.Items {
			assert.ErrorIs(t, it.Err, context.DeadlineExceeded, it.Name)
			assert.Contains(t, it.Err.Error(), "1 path pending", "%s: the flusher's own error is kept", it.Name)
		}
	})
}

func TestRunDefaultTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{0, -time.Second} {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			h := New(Options{Timeout: timeout})
			h.Add("stuck", stuck(release))
			assert.Equal(t, defaultTimeout+grace, h.Run().Took, "timeout %v", timeout)
		})
	}
}

func TestRunNothingAdded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{})
		r := h.Run()
		assert.True(t, r.Saved, "a Run with nothing added drains")
		assert.Empty(t, r.Items)
		assert.Equal(t, "flush: saved 0/0 in 0s", r.String())
	})
}

func TestRunFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errDisk := errors.New("disk full")
		h := New(Options{Timeout: time.Second})
		h.Add("full", after(5*time.Millisecond, errDisk))
		h.Add("ok", after(20*time.Millisecond, nil))
		r := h.Run()
		assert.Equal(t, 20*time.Millisecond, r.Took, "a failure does not wait for the deadline")
		assert.False(t, r.Saved)
		assert.ErrorIs(t, r.Items[0].Err, errDisk)
		assert.NotErrorIs(t, r.Items[0].Err, context.DeadlineExceeded)
		assert.NoError(t, r.Items[1].Err)
	})
}

func TestRunPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{Timeout: time.Second})
		h.Add("bad", Func(func(context.Context) error { panic("boom") }))
		h.Add("ok", after(time.Millisecond, nil))
		r := h.Run()
		assert.ErrorIs(t, r.Items[0].Err, errPanicked)
		assert.Contains(t, r.Items[0].Err.Error(), "boom")
		assert.NoError(t, r.Items[1].Err, "one panicking store does not spoil the others")
	})
}

func TestAddDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Options{Timeout: time.Second})
		h.Add("first", Func(func(context.Context) error {
			h.Add("late", after(0, nil)) // must not deadlock, joins the next Run
			return nil
		}))
		r := h.Run()
		assert.Len(t, r.Items, 1)
		r = h.Run()
		assert.Len(t, r.Items, 2)
		assert.True(t, r.Saved)
	})
}

func TestAddNilPanics(t *testing.T) {
	assert.Panics(t, func() { New(Options{}).Add("nil", nil) })
	assert.Panics(t, func() { New(Options{}).AddStop("nil", nil) })
}

// Savers and stoppers: Run saves and stops nothing, so a quit the person
// cancels after a failed save keeps the agents running; Exit saves and
// stops, and its report tells a save that failed from agents that had to
// be killed.
func TestRunNeverStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errRO := errors.New("read-only file system")
		errKilled := errors.New("qos: stop: 7 processes still ran 1s after SIGTERM and were killed")
		stops := 0
		h := New(Options{Timeout: time.Second})
		h.Add("state", after(time.Millisecond, errRO))
		h.AddStop("agents", Func(func(context.Context) error { stops++; return errKilled }))
		r := h.Run()
		assert.Zero(t, stops, "Run stopped the agents")
		assert.False(t, r.Saved)
		assert.True(t, r.Stopped, "nothing was to stop")
		require.Len(t, r.Items, 1, "Run's items: the savers")

		r = h.Exit()
		assert.Equal(t, 1, stops)
		assert.False(t, r.Saved)
		assert.False(t, r.Stopped)
		require.Len(t, r.Items, 2, "Exit's items: savers and stoppers, in Add order")
		assert.Equal(t, Item{Name: "agents", Stop: true, Err: errKilled}, r.Items[1])
		assert.Equal(t, "flush: saved 0/1, stopped 0/1 in 1ms\n"+
			"  state: read-only file system\n"+
			"  agents: qos: stop: 7 processes still ran 1s after SIGTERM and were killed", r.String())

		h = New(Options{Timeout: time.Second})
		h.Add("state", after(time.Millisecond, nil))
		h.AddStop("agents", Func(func(context.Context) error { return errKilled }))
		r = h.Exit()
		assert.True(t, r.Saved, "agents killed: everything is saved all the same")
		assert.False(t, r.Stopped)
	})
}

func TestReportString(t *testing.T) {
	errFull := &fs.PathError{Op: "statefile: save", Path: "/s/drafts.json", Err: syscall.ENOSPC}
	nd := &statefile.NotDrainedError{Failed: map[string]error{"/s/drafts.json": errFull}}
	errFull2 := &fs.PathError{Op: "statefile: save", Path: "/s/settings.json", Err: syscall.ENOSPC}
	both := &statefile.NotDrainedError{Failed: map[string]error{"/s/drafts.json": errFull, "/s/settings.json": errFull2},
		Pending: []string{"/s/big.json"}, Err: context.DeadlineExceeded}
	tests := []struct {
		name string
		r    Report
		want string
	}{
		{"empty", Report{}, "flush: saved 0/0 in 0s"},
		{"microseconds", Report{Took: 1234567, Items: []Item{{Name: "a"}}}, "flush: saved 1/1 in 1ms"},
		{"sub-millisecond", Report{Took: 4321}, "flush: saved 0/0 in 4µs"},
		{"multi-line error folded", Report{Took: 2 * time.Second, Items: []Item{
			{Name: "drafts", Err: errors.Join(errors.New("a failed"), errors.New("b failed"))},
			{Name: "anchors"},
		}}, "flush: saved 1/2 in 2s\n  drafts: a failed\n  drafts: b failed"},
		{"one prefix when the error names the item", Report{Took: 2 * time.Second, Items: []Item{
			{Name: "drafts", Err: errors.New("drafts: last edit not saved")},
		}}, "flush: saved 0/1 in 2s\n  drafts: last edit not saved"},
		{"each path once, under the item that owns it", Report{Took: 2 * time.Second, Items: []Item{
			{Name: "state", Err: both},
			{Name: "drafts", Err: errors.Join(nd, errors.New("drafts: last edit not saved"))},
		}}, "flush: saved 0/2 in 2s\n" +
			"  /s/big.json: still saving at the deadline\n" +
			"  /s/settings.json: save: no space left on device\n" +
			"  /s/drafts.json: save: no space left on device\n" +
			"  drafts: last edit not saved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.tally()
			assert.Equal(t, tt.want, tt.r.String())
		})
	}
}

// TestRunConcurrent: a Run called while another is under way flushes
// nothing again: both return the one flush's report. A Run after them
// flushes again. The same holds for two Exits (a toolkit's quit and a
// signal at once).
func TestRunConcurrent(t *testing.T) {
	for _, exit := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			h := New(Options{Timeout: time.Second})
			h.Add("state", Func(func(ctx context.Context) error {
				mu.Lock()
				calls++
				mu.Unlock()
				return after(200*time.Millisecond, nil)(ctx)
			}))
			call := h.Run
			if exit {
				call = h.Exit
			}
			start := time.Now()
			reports := make(chan Report, 2)
			go func() { reports <- call() }()
			wait := time.NewTimer(50 * time.Millisecond)
			<-wait.C
			go func() { reports <- call() }()
			a, b := <-reports, <-reports
			assert.Equal(t, 200*time.Millisecond, time.Since(start), "the second returns with the first")
			assert.Equal(t, 1, calls, "flushes: got, want one for both")
			assert.Equal(t, a, b, "both return the one report")
			assert.True(t, a.Saved)
			a.Items[0].Name = "changed"
			assert.Equal(t, "state", b.Items[0].Name, "each report is its own")

			call()
			assert.Equal(t, 2, calls, "one after them flushes again")
		})
	}
}

// TestExitJoinsEarlierExit: an Exit that joins one that started earlier
// (a signal's, then the toolkit's quit) does not take that one's report,
// cut short by a deadline earlier than its own: it runs again in the time
// its own deadline leaves.
func TestExitJoinsEarlierExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		h := New(Options{Timeout: time.Second})
		h.Add("drafts", Func(func(ctx context.Context) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				return after(time.Hour, nil)(ctx) // the disk hangs for the first
			}
			return after(300*time.Millisecond, nil)(ctx)
		}))
		first := make(chan Report, 1)
		go func() { first <- h.Exit() }()
		wait := time.NewTimer(500 * time.Millisecond)
		<-wait.C
		start := time.Now()
		r := h.Exit()
		assert.True(t, r.Saved, "the joining Exit: %v", r)
		assert.Equal(t, 800*time.Millisecond, time.Since(start), "it waited for the first (500 ms) and ran again (300 ms)")
		assert.False(t, (<-first).Saved, "the first Exit's own report")
	})
}

// An Exit that joins an earlier one and goes on after it calls no stopper
// a second time: a stopper still running (agents that take their time to
// end) is waited for, and one that failed keeps its error; only the savers
// that did not drain are flushed again.
func TestJoinedExitCallsStoppersOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stop    func(ctx context.Context) error // ignores ctx: ends at 1.2 s, or fails at once
		stopped bool
		took    time.Duration
	}{
		{"still running", func(context.Context) error {
			tm := time.NewTimer(1200 * time.Millisecond)
			<-tm.C
			return nil
		}, true, 810 * time.Millisecond},
		{"failed", func(context.Context) error { return errors.New("agents: 1 left") }, false, 800 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				flushes, stops := 0, 0
				h := New(Options{Timeout: time.Second})
				h.Add("drafts", Func(func(ctx context.Context) error {
					mu.Lock()
					flushes++
					n := flushes
					mu.Unlock()
					if n == 1 {
						return after(time.Hour, nil)(ctx) // the disk hangs for the first
					}
					return after(300*time.Millisecond, nil)(ctx)
				}))
				h.AddStop("agents", Func(func(ctx context.Context) error {
					mu.Lock()
					stops++
					mu.Unlock()
					return tc.stop(ctx)
				}))
				first := make(chan Report, 1)
				go func() { first <- h.Exit() }()
				wait := time.NewTimer(500 * time.Millisecond)
				<-wait.C
				start := time.Now()
				r := h.Exit()
				assert.True(t, r.Saved, "the joining Exit: %v", r)
				assert.Equal(t, tc.stopped, r.Stopped, "the joining Exit: %v", r)
				assert.Equal(t, tc.took, time.Since(start), "the first's deadline (500 ms, and 10 ms of grace for a stopper still running), then the saver again (300 ms)")
				<-first
				mu.Lock()
				assert.Equal(t, 1, stops, "stopper calls")
				assert.Equal(t, 2, flushes, "saver calls")
				mu.Unlock()
			})
		})
	}
}
