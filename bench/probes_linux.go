package main

import (
	"context"
	"maps"
	"runtime"
	"time"

	"github.com/offmain/offmain/stall"
)

// frameProbe is a 120 Hz tick that does 2 ms of CPU work per tick; it
// records each tick's wake lateness and the time from the tick to the end
// of its work, and how many ticks it missed while a frame ran long.
func frameProbe(ctx context.Context) (map[string][]float64, error) {
	runtime.LockOSThread() // cpuWork reads this thread's CPU clock; threadClock sleeps this thread
	defer runtime.UnlockOSThread()
	var late, total []float64
	s := newSchedule(threadClock(), frameRate)
	for {
		due, ok := s.wait(ctx)
		if !ok {
			return map[string][]float64{"frame.late": late, "frame.total": total,
				"frame.skipped": {float64(s.skipped)}}, nil
		}
		late = append(late, ms(s.since(due)))
		cpuWork(frameWork)
		total = append(total, ms(s.since(due)))
	}
}

// burstProbe sleeps 20 ms, then burns 5 ms of its thread's CPU, and records
// the burst's wall time. nice changes CPU share, not wake-up latency
// (measured on a 2-core VM: a 5 ms burst took 19.7 ms at p50 beside four
// nice-0 spinners, 5.0 ms beside nice-19 ones or none), so this is the
// probe that shows the tiering.
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
// UI thread would; it records each frame's wake lateness and time from its
// tick to its end, and the ticks it missed. Each frame is a stall.Frame
// mark, as an app with a loop of its own would make; sw turns stall on and
// off through the window (see stallPlan), and the frames with stall on go
// to the series key+stallOn, the others to key.
func uiProbe(ctx context.Context, key string, save func(seq int) error, sw *stallSwitch) (map[string][]float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var off, on uiSeries
	s := newSchedule(threadClock(), frameRate)
	nextSave, seq := s.start+saveEvery, 0
	last := &off // the previous frame's: the ticks it swallowed count there
	for {
		skipped := s.skipped
		due, ok := s.wait(ctx)
		last.skipped += float64(s.skipped - skipped)
		if !ok {
			out := off.series(key)
			maps.Copy(out, on.series(key+stallOn))
			return out, nil
		}
		late := ms(s.since(due))
		watched, err := sw.tick(key)
		if err != nil {
			return nil, err
		}
		end := stall.Frame()
		cpuWork(uiWork)
		if due >= nextSave {
			seq++
			err = save(seq)
			for nextSave <= due { // after skipped frames, one save, not a burst
				nextSave += saveEvery
			}
		}
		end()
		if err != nil {
			return nil, err
		}
		last = &off
		if watched || sw.on.Load() {
			last = &on
		}
		last.late = append(last.late, late)
		last.total = append(last.total, ms(s.since(due)))
	}
}

// uiSeries are a ui loop's frames with stall on, or off.
type uiSeries struct {
	late, total []float64
	skipped     float64
}

func (u *uiSeries) series(key string) map[string][]float64 {
	return map[string][]float64{key: u.total, key + ".late": u.late, key + ".skipped": {u.skipped}}
}

// everyProbe calls op on a fixed schedule and records how long each call
// took, and (as key.skipped) the ticks it missed while a call ran long: a
// stall of ten periods is one sample, and without that count the nine ticks
// it swallowed would vanish from the figures unnoticed.
func everyProbe(ctx context.Context, key string, period time.Duration, op func(seq int) error) (map[string][]float64, error) {
	var took []float64
	s := newSchedule(goClock(), period)
	for seq := 1; ; seq++ {
		if _, ok := s.wait(ctx); !ok {
			return map[string][]float64{key: took, key + ".skipped": {float64(s.skipped)}}, nil
		}
		start := time.Now()
		if err := op(seq); err != nil {
			return nil, err
		}
		took = append(took, ms(time.Since(start)))
	}
}
