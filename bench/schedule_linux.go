package main

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// clock is a monotonic clock and a way to sleep on it; readings are
// durations since an arbitrary origin.
type clock struct {
	now   func() time.Duration
	sleep func(ctx context.Context, until time.Duration) (ok bool) // until now() >= until; false once ctx has ended
}

// goClock sleeps on a Go timer, which watches ctx and which testing/synctest
// can fake. Go's timers wake up to 1 ms late: the runtime waits for them in
// epoll_wait, whose timeout is whole milliseconds (runtime/netpoll_epoll.go
// rounds 8.33 ms down to 8, then waits 1 more). Fine for the I/O and save
// probes, which measure their calls, not their wake-ups.
func goClock() clock {
	origin := time.Now()
	t := time.NewTimer(time.Hour)
	t.Stop()
	return clock{
		now: func() time.Duration { return time.Since(origin) },
		sleep: func(ctx context.Context, until time.Duration) bool {
			t.Reset(until - time.Since(origin))
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
				return true
			}
		},
	}
}

// threadClock sleeps the calling thread itself until an absolute
// CLOCK_MONOTONIC time (clock_nanosleep(2), TIMER_ABSTIME), so a tick's
// lateness is the kernel's wake-up delay of that thread, which is what the
// frame and ui loops measure. A Go timer would add up to 1 ms of its own (see
// goClock) and a second wake-up: the thread that ran the timer hands the
// locked goroutine to its own thread. ctx is checked on waking, so the loop
// ends at most one period after it. The goroutine should be locked to its
// thread.
func threadClock() clock {
	return clock{
		now: monoNow,
		sleep: func(ctx context.Context, until time.Duration) bool {
			ts := unix.NsecToTimespec(int64(until))
			for {
				err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
				if err == nil {
					break
				}
				if err != unix.EINTR { // the Go runtime's preemption signals interrupt it
					panic("bench: clock_nanosleep: " + err.Error()) // EINVAL, EFAULT: a bug here
				}
			}
			return ctx.Err() == nil
		},
	}
}

// monoNow reads CLOCK_MONOTONIC (clock_gettime(2)).
func monoNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("bench: CLOCK_MONOTONIC: " + err.Error())
	}
	return time.Duration(ts.Nano())
}

// schedule ticks at a fixed rate from its start and skips ticks that have
// already passed, as a display skips the frames it missed, so a tick's
// lateness is only the wake-up delay; skipped counts the ticks passed over.
type schedule struct {
	clk     clock
	start   time.Duration // on clk
	period  time.Duration
	k       int64 // the tick waited for last
	skipped int64 // ticks passed over because the loop was still busy
}

func newSchedule(clk clock, period time.Duration) *schedule {
	return &schedule{clk: clk, start: clk.now(), period: period}
}

// wait sleeps until the next tick and returns when it was due, on the
// schedule's clock; ok is false once ctx has ended.
func (s *schedule) wait(ctx context.Context) (due time.Duration, ok bool) {
	s.k++
	if passed := int64((s.clk.now() - s.start) / s.period); passed >= s.k {
		s.skipped += passed + 1 - s.k
		s.k = passed + 1
	}
	due = s.start + time.Duration(s.k)*s.period
	return due, s.clk.sleep(ctx, due)
}

// since returns how long ago t was on the schedule's clock.
func (s *schedule) since(t time.Duration) time.Duration { return s.clk.now() - t }
