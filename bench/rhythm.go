package main

import "time"

// The probes' rhythm: what each stands for is in bench/README.md.
const (
	frameRate  = time.Second / 120      // the frame and ui loops tick at 120 Hz
	frameWork  = 2 * time.Millisecond   // CPU work per frame tick
	uiWork     = 1 * time.Millisecond   // CPU work per ui tick besides its saves
	burstSleep = 20 * time.Millisecond  // the burst probe sleeps, then
	burstWork  = 5 * time.Millisecond   // burns this much of its thread's CPU
	ioEvery    = 50 * time.Millisecond  // read and fsync probes
	saveEvery  = 300 * time.Millisecond // save probes and the ui loop's saves
)

// Thresholds, named by what they are in the loops' own terms.
var (
	periodMs = ms(frameRate) // one tick of the 120 Hz loops: a frame must finish before the next tick
	// overMs is the fixed threshold the other probes count against: two
	// ticks of the 120 Hz loop (one frame at 60 Hz), the longest a call on a
	// GUI thread can take before a 120 Hz display shows it as two missed frames.
	overMs = 2 * periodMs
)

// stallBudget is the longest wait of a watched ui loop that stall does not
// report: two ticks, the over_ rows' threshold (one frame at 60 Hz, stall's
// default).
const stallBudget = 2 * frameRate

// tickAccount returns, for a fixed-rate loop, how many scheduled ticks
// missed their frame and how many ticks were scheduled. A tick misses when
// its frame did not finish before the next tick (totals[i], from the tick
// to the end of its work, over one period) or when it never ran (skipped:
// the loop was still busy with an earlier frame). Counting only the ticks
// that ran would hide a long stall behind one sample.
func tickAccount(totals []float64, skipped, periodMs float64) (missed, scheduled float64) {
	for _, t := range totals {
		if t > periodMs {
			missed++
		}
	}
	return missed + skipped, float64(len(totals)) + skipped
}
