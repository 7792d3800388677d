package main

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock whose sleep wakes the loop lags[i] late at its i-th wait.
type fakeClock struct {
	t    time.Duration
	lags []time.Duration
}

func (f *fakeClock) clock() clock {
	return clock{
		now: func() time.Duration { return f.t },
		sleep: func(_ context.Context, until time.Duration) bool {
			f.t = max(f.t, until) + f.lags[0]
			f.lags = f.lags[1:]
			return true
		},
	}
}

// TestScheduleSkipsPassedTicks checks the due times a loop gets and the
// ticks it is told it skipped when a frame runs over one or more periods.
func TestScheduleSkipsPassedTicks(t *testing.T) {
	const p = 10 * time.Millisecond
	f := &fakeClock{t: time.Second, lags: []time.Duration{time.Millisecond, 0, 0, 25 * time.Millisecond, 0}}
	s := newSchedule(f.clock(), p)
	busy := []time.Duration{0, 12 * time.Millisecond, 0, 0, 0} // frame 2 overruns tick 3
	var dues []time.Duration
	var lates []time.Duration
	for i := range 5 {
		due, ok := s.wait(t.Context())
		require.True(t, ok)
		dues = append(dues, due-time.Second)
		lates = append(lates, s.since(due))
		f.t += busy[i]
	}
	ms := time.Millisecond
	// tick 1 at 10 (1 ms late); tick 2 at 20, busy to 32: tick 3 skipped, wait
	// for 40; tick 5 at 50 woken 25 ms late, at 75: ticks 6 and 7 skipped.
	assert.Equal(t, []time.Duration{10 * ms, 20 * ms, 40 * ms, 50 * ms, 80 * ms}, dues, "due times")
	assert.Equal(t, []time.Duration{ms, 0, 0, 25 * ms, 0}, lates, "lateness")
	assert.Equal(t, int64(3), s.skipped, "skipped ticks")
}

// TestThreadClockSleepsToDeadline checks that the thread clock never wakes
// before the deadline (clock_nanosleep(2) with TIMER_ABSTIME) and reports an
// ended context on waking.
func TestThreadClockSleepsToDeadline(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := threadClock()
	until := c.now() + 3*time.Millisecond
	require.True(t, c.sleep(t.Context(), until), "ok: got false for a live context")
	assert.GreaterOrEqual(t, c.now(), until, "woke before the deadline")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.False(t, c.sleep(ctx, c.now()), "ok: got true for an ended context")
}
