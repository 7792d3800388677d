package flush

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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
		h := New(0)
		h.Add("slow", after(900*time.Millisecond, nil))
		h.Add("fast", after(10*time.Millisecond, nil))
		h.Add("mid", after(500*time.Millisecond, nil))
		r := h.Run()
		assert.True(t, r.Drained)
		assert.Equal(t, 900*time.Millisecond, r.Took, "Took: flushers run in parallel, so the slowest one sets it")
		require.Len(t, r.Items, 3)
		for i, name := range []string{"slow", "fast", "mid"} {
			assert.Equal(t, Item{Name: name, Drained: true}, r.Items[i], "item %d, in Add order", i)
		}
		assert.Equal(t, "flush: drained 3/3 in 900ms", r.String())
	})
}

// TestRunStuckFlusher is the quit on a disk that never finishes: the hook
// returns at the deadline, reports the stuck item, and the stuck goroutine
// ends once its write returns.
func TestRunStuckFlusher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release) // the "disk" finishes after the test: the goroutine ends then
		h := New(300 * time.Millisecond)
		h.Add("ok", after(time.Millisecond, nil))
		h.Add("stuck", stuck(release))
		h.Add("polite", after(time.Hour, nil))
		r := h.Run()
		assert.Equal(t, 300*time.Millisecond+Grace, r.Took, "Took: got, want the deadline plus Grace exactly")
		assert.False(t, r.Drained)
		require.Len(t, r.Items, 3)
		assert.True(t, r.Items[0].Drained, "ok")
		for _, it := range r.Items[1:] {
			assert.False(t, it.Drained, it.Name)
			assert.ErrorIs(t, it.Err, context.DeadlineExceeded, it.Name)
		}
		assert.Contains(t, r.Items[2].Err.Error(), "1 path pending", "a flusher's own error is kept")
		line := r.String()
		assert.NotContains(t, line, "\n")
		assert.True(t, strings.HasPrefix(line, "flush: drained 1/3 in 310ms; not drained: stuck: "), line)
		assert.Contains(t, line, "; polite: fake store: 1 path pending: context deadline exceeded")
	})
}

// TestRunPoliteAtDeadline: flushers that give up with their context are
// all heard, and Run needs no Grace when nothing is stuck.
func TestRunPoliteAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(300 * time.Millisecond)
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
			h := New(timeout)
			h.Add("stuck", stuck(release))
			assert.Equal(t, DefaultTimeout+Grace, h.Run().Took, "timeout %v", timeout)
		})
	}
}

func TestRunZeroHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var h Hook
		r := h.Run()
		assert.True(t, r.Drained, "a Run with nothing added drains")
		assert.Empty(t, r.Items)
		assert.Equal(t, "flush: drained 0/0 in 0s", r.String())
		release := make(chan struct{})
		defer close(release)
		h.Add("stuck", stuck(release))
		assert.Equal(t, DefaultTimeout+Grace, h.Run().Took, "zero Hook's deadline")
	})
}

func TestRunFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errDisk := errors.New("disk full")
		h := New(time.Second)
		h.Add("full", after(5*time.Millisecond, errDisk))
		h.Add("ok", after(20*time.Millisecond, nil))
		r := h.Run()
		assert.Equal(t, 20*time.Millisecond, r.Took, "a failure does not wait for the deadline")
		assert.False(t, r.Drained)
		assert.ErrorIs(t, r.Items[0].Err, errDisk)
		assert.NotErrorIs(t, r.Items[0].Err, context.DeadlineExceeded)
		assert.True(t, r.Items[1].Drained)
	})
}

func TestRunPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(time.Second)
		h.Add("bad", Func(func(context.Context) error { panic("boom") }))
		h.Add("ok", after(time.Millisecond, nil))
		r := h.Run()
		assert.ErrorIs(t, r.Items[0].Err, errPanicked)
		assert.Contains(t, r.Items[0].Err.Error(), "boom")
		assert.True(t, r.Items[1].Drained, "one panicking store does not spoil the others")
	})
}

func TestRunContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		h := New(time.Second)
		h.Add("stuck", stuck(release))

		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		r := h.RunContext(ctx)
		assert.Equal(t, 100*time.Millisecond+Grace, r.Took, "the parent's earlier deadline wins")
		assert.ErrorIs(t, r.Items[0].Err, context.DeadlineExceeded)

		ctx, cancel = context.WithCancel(t.Context())
		cancel()
		r = h.RunContext(ctx)
		assert.Equal(t, Grace, r.Took)
		assert.ErrorIs(t, r.Items[0].Err, context.Canceled)
	})
}

func TestAddDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(time.Second)
		h.Add("first", Func(func(context.Context) error {
			h.Add("late", after(0, nil)) // must not deadlock, joins the next Run
			return nil
		}))
		r := h.Run()
		assert.Len(t, r.Items, 1)
		r = h.Run()
		assert.Len(t, r.Items, 2)
		assert.True(t, r.Drained)
	})
}

func TestAddNilPanics(t *testing.T) {
	assert.Panics(t, func() { New(0).Add("nil", nil) })
}

func TestReportString(t *testing.T) {
	tests := []struct {
		name string
		r    Report
		want string
	}{
		{"empty", Report{Drained: true}, "flush: drained 0/0 in 0s"},
		{"microseconds", Report{Drained: true, Took: 1234567, Items: []Item{{Name: "a", Drained: true}}},
			"flush: drained 1/1 in 1ms"},
		{"sub-millisecond", Report{Drained: true, Took: 4321}, "flush: drained 0/0 in 4µs"},
		{"multi-line error folded", Report{Took: 2 * time.Second, Items: []Item{
			{Name: "drafts", Err: errors.Join(errors.New("a failed"), errors.New("b failed"))},
			{Name: "anchors", Drained: true},
			{Name: "odd"},
		}}, "flush: drained 1/3 in 2s; not drained: drafts: a failed | b failed; odd: not drained"},
		{"one prefix when the error names the item", Report{Took: 2 * time.Second, Items: []Item{
			{Name: "statefile", Err: fmt.Errorf("statefile: not drained: 1 pending (/s/big.json): %w", context.DeadlineExceeded)},
			{Name: "drafts", Err: errors.New("statefile: not drained: 1 pending (/s/drafts.json)")},
		}}, "flush: drained 0/2 in 2s; not drained: statefile: not drained: 1 pending (/s/big.json): context deadline exceeded; " +
			"drafts: statefile: not drained: 1 pending (/s/drafts.json)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.r.String()
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "\n", "one line")
		})
	}
}

// store is a fake statefile.Store: it flushes paths, each of which fails
// with its error (nil: drained). It records what FlushExcept left out.
type store struct {
	mu     sync.Mutex // protects except
	paths  map[string]error
	except [][]string
}

func (s *store) Flush(ctx context.Context) error { return s.flush(nil) }

func (s *store) FlushExcept(ctx context.Context, except ...string) error {
	s.mu.Lock()
	s.except = append(s.except, except)
	s.mu.Unlock()
	return s.flush(except)
}

func (s *store) flush(except []string) error {
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(s.paths)) {
		if err := s.paths[p]; err != nil && !slices.Contains(except, p) {
			errs = append(errs, fmt.Errorf("failed %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// owner is a fake drafts.Store: it owns one file of a store.
type owner struct {
	s    *store
	path string
}

func (o owner) Flush(context.Context) error {
	if err := o.s.paths[o.path]; err != nil {
		return fmt.Errorf("failed %s: %w", o.path, err)
	}
	return nil
}

func (o owner) Path() string { return o.path }

// TestRunAttributesPaths: with the stores of an app added (a statefile
// Store and the drafts and anchors stores that save through it), a failed
// drafts.json is reported under "drafts" alone: the Store's item leaves
// the paths other items own out of its Flush.
func TestRunAttributesPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errFull := errors.New("no space left on device")
		st := &store{paths: map[string]error{
			"/s/settings.json": nil,
			"/s/drafts.json":   errFull,
			"/s/anchors.json":  nil,
		}}
		h := New(time.Second)
		h.Add("state", st)
		h.Add("drafts", owner{st, "/s/drafts.json"})
		h.Add("anchors", owner{st, "/s/anchors.json"})
		h.Add("agents", after(time.Millisecond, nil))
		r := h.Run()
		require.Len(t, r.Items, 4)
		assert.True(t, r.Items[0].Drained, "state: got %v, want drained: drafts.json is the drafts item's", r.Items[0].Err)
		assert.False(t, r.Items[1].Drained, "drafts: got drained, want its failure")
		assert.ErrorIs(t, r.Items[1].Err, errFull)
		assert.True(t, r.Items[2].Drained, "anchors")
		assert.True(t, r.Items[3].Drained, "agents")
		assert.Equal(t, [][]string{{"/s/drafts.json", "/s/anchors.json"}}, st.except, "FlushExcept's paths: got, want the owners'")
		assert.Equal(t, 1, strings.Count(r.String(), "drafts.json"), "drafts.json once in %q", r.String())

		// Alone, the Store flushes everything, and reports drafts.json.
		h = New(time.Second)
		h.Add("state", st)
		r = h.Run()
		assert.ErrorIs(t, r.Items[0].Err, errFull, "a Store alone reports every path")
		assert.Len(t, st.except, 1, "FlushExcept without owners: got a call, want Flush")
	})
}

// TestRunConcurrent: a Run called while another is under way (a toolkit's
// quit and a signal at once) flushes nothing again: both return the one
// flush's report. A Run after them flushes again.
func TestRunConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		h := New(time.Second)
		h.Add("state", Func(func(ctx context.Context) error {
			mu.Lock()
			calls++
			mu.Unlock()
			return after(200*time.Millisecond, nil)(ctx)
		}))
		start := time.Now()
		reports := make(chan Report, 2)
		go func() { reports <- h.Run() }()
		wait := time.NewTimer(50 * time.Millisecond)
		<-wait.C
		go func() { reports <- h.Run() }()
		a, b := <-reports, <-reports
		assert.Equal(t, 200*time.Millisecond, time.Since(start), "the second Run returns with the first")
		assert.Equal(t, 1, calls, "flushes: got, want one for both Runs")
		assert.Equal(t, a, b, "both Runs return the one report")
		assert.True(t, a.Drained)
		a.Items[0].Name = "changed"
		assert.Equal(t, "state", b.Items[0].Name, "each Run's report is its own")

		h.Run()
		assert.Equal(t, 2, calls, "a Run after them flushes again")
	})
}

// TestRunJoinerContext: a RunContext that joins a Run under way still
// returns when its own ctx ends, reporting the items as still flushing.
func TestRunJoinerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(time.Second)
		h.Add("slow", after(500*time.Millisecond, nil))
		first := make(chan Report, 1)
		go func() { first <- h.Run() }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		r := h.RunContext(ctx)
		assert.Equal(t, 100*time.Millisecond, r.Took, "the joiner's own deadline")
		assert.False(t, r.Drained)
		assert.ErrorIs(t, r.Items[0].Err, context.DeadlineExceeded)
		assert.True(t, (<-first).Drained, "the first Run goes on to its end")
	})
}

// TestRunJoinsShorterRun: a Run that joins a RunContext with a shorter
// budget of its own (a toolkit's quit path) does not take that run's
// report, cut short by a deadline earlier than the joiner's: it flushes
// again in the time its own deadline leaves. A joined run that drained, or
// that had as long as the joiner, is returned as it is.
func TestRunJoinsShorterRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		h := New(2 * time.Second)
		h.Add("drafts", Func(func(ctx context.Context) error {
			mu.Lock()
			calls++
			mu.Unlock()
			return after(300*time.Millisecond, nil)(ctx) // slow, but within 2 s
		}))
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		short := make(chan Report, 1)
		go func() { short <- h.RunContext(ctx) }()
		synctest.Wait()
		start := time.Now()
		r := h.Run() // Notify's Run: 2 s of its own
		assert.True(t, r.Drained, "the joining Run: %v", r)
		assert.Equal(t, 350*time.Millisecond, time.Since(start), "it waited for the short run (50 ms) and flushed again (300 ms)")
		assert.Equal(t, 350*time.Millisecond, r.Took, "its report's time is its own")
		assert.False(t, (<-short).Drained, "the short run's own report")
		mu.Lock()
		assert.Equal(t, 2, calls, "flushes: the short run's and the joiner's")
		mu.Unlock()
	})
}
