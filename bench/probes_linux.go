package main

import (
	"context"
	"runtime"
	"time"
)

// The probes' rhythm, from issue 7.
const (
	frameRate  = time.Second / 120      // the frame and ui loops tick at 120 Hz
	frameWork  = 2 * time.Millisecond   // CPU work per frame tick
	uiWork     = 1 * time.Millisecond   // CPU work per ui tick besides its saves
	burstSleep = 20 * time.Millisecond  // the burst probe sleeps, then
	burstWork  = 5 * time.Millisecond   // burns this much of its thread's CPU
	ioEvery    = 50 * time.Millisecond  // read and fsync probes
	saveEvery  = 300 * time.Millisecond // save probes and the ui loop's saves
)

// schedule ticks at a fixed rate from its start and skips ticks that have
// already passed, as a display skips the frames it missed, so a tick's
// lateness is only the wake-up delay.
type schedule struct {
	start   time.Time
	period  time.Duration
	k       int64 // the tick waited for last
	skipped int64 // ticks passed over because the loop was still busy
	timer   *time.Timer
}

func newSchedule(period time.Duration) *schedule {
	t := time.NewTimer(period)
	t.Stop()
	return &schedule{start: time.Now(), period: period, timer: t}
}

// wait sleeps until the next tick and returns when it was due; ok is false
// once ctx has ended.
func (s *schedule) wait(ctx context.Context) (due time.Time, ok bool) {
	s.k++
	if passed := int64(time.Since(s.start) / s.period); passed >= s.k {
		s.skipped += passed + 1 - s.k
		s.k = passed + 1
	}
	due = s.start.Add(time.Duration(s.k) * s.period)
	s.timer.Reset(time.Until(due))
	select {
	case <-ctx.Done():
		s.timer.Stop()
		return due, false
	case <-s.timer.C:
		return due, true
	}
}

// frameProbe is a 120 Hz tick that does 2 ms of CPU work per tick; it
// records each tick's wake lateness and the time from the tick to the end
// of its work, and how many ticks it missed while a frame ran long.
func frameProbe(ctx context.Context) (map[string][]float64, error) {
	runtime.LockOSThread() // cpuWork reads this thread's CPU clock
	defer runtime.UnlockOSThread()
	var late, total []float64
	s := newSchedule(frameRate)
	for {
		due, ok := s.wait(ctx)
		if !ok {
			return map[string][]float64{"frame.late": late, "frame.total": total,
				"frame.skipped": {float64(s.skipped)}}, nil
		}
		late = append(late, ms(time.Since(due)))
		cpuWork(frameWork)
		total = append(total, ms(time.Since(due)))
	}
}

// burstProbe sleeps 20 ms, then burns 5 ms of its thread's CPU, and records
// the burst's wall time. nice changes CPU share, not wake-up latency
// (ANCHORS.md: 19.7 ms at p50 beside nice-0 load, 5.0 ms idle), so this is
// the probe that shows the tiering.
func burstProbe(ctx context.Context) (map[string][]float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var wall []float64
	t := time.NewTimer(burstSleep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return map[string][]float64{"burst": wall}, nil
		case <-t.C:
		}
		start := time.Now()
		cpuWork(burstWork)
		wall = append(wall, ms(time.Since(start)))
		t.Reset(burstSleep)
	}
}

// uiProbe is a UI loop locked to one thread at 120 Hz that does 1 ms of work
// per frame and calls save every 300 ms, as an app saving a draft from its
// UI thread would; it records each frame's time from its tick to its end,
// and the ticks it missed.
func uiProbe(ctx context.Context, key string, save func(seq int) error) (map[string][]float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var total []float64
	s := newSchedule(frameRate)
	nextSave, seq := s.start.Add(saveEvery), 0
	for {
		due, ok := s.wait(ctx)
		if !ok {
			return map[string][]float64{key: total, key + ".skipped": {float64(s.skipped)}}, nil
		}
		cpuWork(uiWork)
		if !due.Before(nextSave) {
			seq++
			if err := save(seq); err != nil {
				return nil, err
			}
			for !nextSave.After(due) { // after skipped frames, one save, not a burst
				nextSave = nextSave.Add(saveEvery)
			}
		}
		total = append(total, ms(time.Since(due)))
	}
}

// everyProbe calls op on a fixed schedule and records how long each call took.
func everyProbe(ctx context.Context, key string, period time.Duration, op func(seq int) error) (map[string][]float64, error) {
	var took []float64
	s := newSchedule(period)
	for seq := 1; ; seq++ {
		if _, ok := s.wait(ctx); !ok {
			return map[string][]float64{key: took}, nil
		}
		start := time.Now()
		if err := op(seq); err != nil {
			return nil, err
		}
		took = append(took, ms(time.Since(start)))
	}
}
