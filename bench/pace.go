package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// pace is the offered rate of each I/O worker, in the units its counter
// counts (bytes per second for writers and readers, files per second for
// metadata storms); zero leaves that kind a closed loop, which does as much
// as its tier lets it. With a rate, a worker that falls behind runs back to
// back until it has caught up (an open loop: the offered load does not
// shrink because the disk got slow), so every arm is offered the same load
// and the agents' rows show whether it was met.
type pace struct {
	write, read, meta float64
}

// parsePace parses "write=20,read=20,meta=2000" (MB/s, MB/s, files/s).
func parsePace(s string) (pace, error) {
	var p pace
	if s == "" {
		return p, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || x <= 0 {
			return p, fmt.Errorf("%w: -pace: %q: want kind=rate with a rate above 0", errUsage, part)
		}
		switch k {
		case "write":
			p.write = x * 1e6
		case "read":
			p.read = x * 1e6
		case "meta":
			p.meta = x
		default:
			return p, fmt.Errorf("%w: -pace: unknown kind %q (want write, read or meta)", errUsage, k)
		}
	}
	return p, nil
}

// forMode returns the rate of a worker mode; 0 for none.
func (p pace) forMode(mode string) float64 {
	return map[string]float64{"write": p.write, "read": p.read, "meta": p.meta}[mode]
}

func (p pace) String() string {
	if p == (pace{}) {
		return "I/O workers in closed loops (as fast as their tier lets them)"
	}
	f := func(v float64, unit string) string {
		if v == 0 {
			return "closed loop"
		}
		return strconv.FormatFloat(v, 'g', 4, 64) + " " + unit
	}
	return fmt.Sprintf("offered rate per worker: writers %s, readers %s, storms %s",
		f(p.write/1e6, "MB/s"), f(p.read/1e6, "MB/s"), f(p.meta, "files/s"))
}

// paceDelay returns how long a worker that has done `done` units since it
// started elapsed ago must wait to stay at rate units per second: zero when
// it is behind.
func paceDelay(done, rate float64, elapsed time.Duration) time.Duration {
	if rate <= 0 {
		return 0
	}
	due := time.Duration(done / rate * float64(time.Second))
	return max(0, due-elapsed)
}
