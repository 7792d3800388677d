package stall

import (
	"fmt"
	"strings"
	"time"
)

// Options configure [Watch]. The zero value watches with the defaults.
type Options struct {
	// Budget is the longest wait of the watched goroutine that is not
	// reported: a wait is reported when it lasts longer. Zero or less
	// means one frame at 60 Hz, 1/60 s.
	Budget time.Duration

	// OnReport receives the reports, one at a time, on a goroutine of the
	// watcher's; a slow OnReport delays later reports, never the watched
	// goroutine. It must not call the stop function [Watch] returned. Nil
	// logs each report to [slog.Default] at level Warn, with the report
	// as a group named "stall".
	OnReport func(Report)

	// Idle names functions whose waits are the watched goroutine's idle
	// wait, as [runtime.Frame.Function] spells them
	// ("example.com/app/ui.(*Loop).run"): a wait whose call site (the
	// first frame of [Report.Stack]) is one of them is never reported.
	// They add to the toolkits' idle waits stall knows (see the package
	// documentation). Nil adds none. Idle applies until the first
	// [Frame] mark; after it, waits outside frames are idle.
	Idle []string

	// EnvOnly makes Watch watch only when the OFFMAIN_STALL variable asks
	// for it, so that a released app can ship the call and a user turn it
	// on for a bug report. False watches unless OFFMAIN_STALL says off.
	// See the package documentation for the variable's values.
	EnvOnly bool
}

// envVar is the environment variable Watch reads.
const envVar = "OFFMAIN_STALL"

// frame60Hz is the default budget.
const frame60Hz = time.Second / 60

// resolve applies env, the value of [envVar], to o and fills in the
// defaults. It reports whether to watch.
func (o Options) resolve(env string) (Options, bool, error) {
	on := !o.EnvOnly
	switch v := strings.TrimSpace(env); {
	case v == "":
	case v == "1" || v == "on":
		on = true
	case v == "0" || v == "off":
		on = false
	case strings.HasPrefix(v, "budget="):
		d, err := time.ParseDuration(strings.TrimPrefix(v, "budget="))
		if err != nil || d <= 0 {
			return o, false, fmt.Errorf("stall: %s=%q: the budget must be a positive duration such as 8ms", envVar, env)
		}
		o.Budget, on = d, true
	default:
		return o, false, fmt.Errorf("stall: %s=%q: want 1, on, 0, off or budget=<duration>", envVar, env)
	}
	if o.Budget <= 0 {
		o.Budget = frame60Hz
	}
	return o, on, nil
}
