package main

import (
	"fmt"
	"math"
	"slices"
)

// metricKind says how a metric is computed from the rounds and which
// interval it gets.
type metricKind string

const (
	kindQuantile metricKind = "quantile" // a quantile of the samples pooled over the rounds
	kindFraction metricKind = "fraction" // k of n trials (ticks, calls, windows): Wilson interval
	kindRate     metricKind = "rate"     // an amount per second or per call: Σ amounts / Σ denominators
	kindMax      metricKind = "max"      // the largest sample: no interval
)

// metricDef derives one metric of one probe from an arm's rounds.
type metricDef struct {
	probe, metric string
	kind          metricKind
	series        string  // quantile, max: the sample series
	q             float64 // quantile
	// parts returns a round's numerator and denominator (fraction, rate);
	// ok is false when the round lacks the series.
	parts  func(m map[string][]float64) (num, den float64, ok bool)
	vsIdle bool // also report the ratio (or difference) to idle
	noCmp  bool // context, not an outcome: no comparison with default
	// vsOff is "probe/metric" of the same figure with stall off, which
	// this one (with stall on) is compared with, in the same arm.
	vsOff string
}

func quantileDef(probe, metric, series string, q float64) metricDef {
	return metricDef{probe: probe, metric: metric, kind: kindQuantile, series: series, q: q}
}

// overDef counts the calls of series over overMs.
func overDef(probe, series string) metricDef {
	return metricDef{probe: probe, metric: fmt.Sprintf("over_%.1fms", overMs), kind: kindFraction,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			xs, ok := m[series]
			return countOver(xs, overMs), float64(len(xs)), ok
		}}
}

// missedDef is tickAccount over a 120 Hz loop's rounds.
func missedDef(probe, metric, totalsKey, skippedKey string) metricDef {
	return metricDef{probe: probe, metric: metric, kind: kindFraction,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			totals, ok := m[totalsKey]
			k, n := tickAccount(totals, sum(m[skippedKey]), periodMs)
			return k, n, ok
		}}
}

// runqDef is the run-queue delay of the probe's thread per sample, from
// schedstat: time it was runnable but waited for a CPU.
func runqDef(probe, samples, runq string) metricDef {
	return metricDef{probe: probe, metric: "runq_ms_per_call", kind: kindRate,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			d, ok := m[runq]
			return sum(d), float64(len(m[samples])), ok && len(d) > 0
		}}
}

// perSecond divides a round's sum of series by its window in seconds.
func perSecond(probe, metric, series, secs string, scale float64, noCmp bool) metricDef {
	return metricDef{probe: probe, metric: metric, kind: kindRate, noCmp: noCmp,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			v, ok := m[series]
			return sum(v) * scale, sum(m[secs]), ok && len(v) > 0
		}}
}

// share divides a round's sum of series by the sum of of (fraction of time).
func share(probe, metric, series, of string) metricDef {
	return metricDef{probe: probe, metric: metric, kind: kindRate, noCmp: true,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			v, ok := m[series]
			return 100 * sum(v), sum(m[of]), ok && len(v) > 0
		}}
}

// metricDefs lists every metric in table order.
var metricDefs = withIdle(slices.Concat([]metricDef{
	quantileDef("frame", "late_p50_ms", "frame.late", 0.50),
	quantileDef("frame", "late_p99_ms", "frame.late", 0.99),
	missedDef("frame", "missed_ticks", "frame.total", "frame.skipped"),
	runqDef("frame", "frame.total", "frame.runq"),
	quantileDef("burst", "p50_ms", "burst", 0.50),
	quantileDef("burst", "p95_ms", "burst", 0.95),
	quantileDef("burst", "p99_ms", "burst", 0.99),
	overDef("burst", "burst"),
	runqDef("burst", "burst", "burst.runq"),
	quantileDef("read", "p50_ms", "read", 0.50),
	quantileDef("read", "p99_ms", "read", 0.99),
	overDef("read", "read"),
	runqDef("read", "read", "read.runq"),
	quantileDef("fsync", "p50_ms", "fsync", 0.50),
	quantileDef("fsync", "p99_ms", "fsync", 0.99),
	overDef("fsync", "fsync"),
	runqDef("fsync", "fsync", "fsync.runq"),
	quantileDef("save-sync", "p50_ms", "save-sync", 0.50),
	quantileDef("save-sync", "p95_ms", "save-sync", 0.95),
	overDef("save-sync", "save-sync"),
	quantileDef("save-statefile", "p50_ms", "save-statefile", 0.50),
	quantileDef("save-statefile", "p95_ms", "save-statefile", 0.95),
	{probe: "save-statefile", metric: "max_ms", kind: kindMax, series: "save-statefile", noCmp: true},
	overDef("save-statefile", "save-statefile"),
	quantileDef("save-statefile", "durable_p50_ms", "save-statefile.durable", 0.50),
	quantileDef("save-statefile", "durable_p95_ms", "save-statefile.durable", 0.95),
	{probe: "save-statefile", metric: "written", kind: kindFraction,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			w, ok := m["save-statefile.written"]
			return sum(w), float64(len(m["save-statefile"])), ok
		}},
}, uiDefs("sync", uiSync), uiDefs("statefile", uiStatefile), []metricDef{
	{probe: uiStallProbe, metric: "stop_max_ms", kind: kindMax, series: stallStops, noCmp: true},
	perSecond("agents", "spin_Miter_per_s", "agent.spin", "agent.secs", 1.048576, false),
	perSecond("agents", "write_MB_per_s", "agent.write", "agent.secs", 1e-6, false),
	perSecond("agents", "read_MB_per_s", "agent.read", "agent.secs", 1e-6, false),
	perSecond("agents", "meta_files_per_s", "agent.meta", "agent.secs", 1, false),
	share("machine", "steal_pct", "machine.steal", "machine.total"),
	share("machine", "other_cpu_pct", "machine.other", "machine.total"),
	share("machine", "app_cpu_pct", "machine.app", "machine.total"),
	share("machine", "psi_cpu_some_pct", "machine.psi_cpu", "machine.secs"),
	share("machine", "psi_io_some_pct", "machine.psi_io", "machine.secs"),
	{probe: "machine", metric: "flagged_windows", kind: kindFraction, noCmp: true,
		parts: func(m map[string][]float64) (float64, float64, bool) {
			f, ok := m["machine.flagged"]
			return sum(f), float64(len(f)), ok
		}},
}))

// The ui loops, by the key their series carry.
const (
	uiSync      = "ui-sync"
	uiStatefile = "ui-statefile"
	// stallOn ends the key of the series a ui loop records while stall
	// watches ("ui-sync+stall"); the plain key holds its ticks with stall
	// off. The probe column of those rows is "ui" + stallOn.
	stallOn      = "+stall"
	uiStallProbe = "ui" + stallOn
	// stallStops is the series of how long stall's stops took, ms: each
	// ends with a last pass over the flight recorder's trace (stall.Watch),
	// and the frames of both loops until it returns count as stall on.
	stallStops   = stallSeries + ".stop"
	stallStopsAt = stallSeries + ".stop_at"  // when each stop began, ms from the window's start
	stallWatchAt = stallSeries + ".watch_at" // when the Watch each stop ended began, ms from the window's start
	stallSeries  = "stall"                   // the start of stall's own series' keys
)

// uiDefs are the rows of the ui loop key, which saves as mode says: each
// figure of its frames with stall off, then the same with stall on,
// compared with it (not with default); then how many stall reports named
// the loop's file, of all its reports.
func uiDefs(mode, key string) []metricDef {
	late, missed, on := "late_p95_ms_"+mode, "missed_ticks_"+mode, key+stallOn
	withOff := func(d metricDef) metricDef {
		d.vsOff, d.noCmp = "ui/"+d.metric, true
		return d
	}
	return []metricDef{
		quantileDef("ui", late, key+".late", 0.95),
		withOff(quantileDef(uiStallProbe, late, on+".late", 0.95)),
		missedDef("ui", missed, key, key+".skipped"),
		withOff(missedDef(uiStallProbe, missed, on, on+".skipped")),
		{probe: uiStallProbe, metric: "reports_naming_file_" + mode, kind: kindFraction, noCmp: true,
			parts: func(m map[string][]float64) (float64, float64, bool) {
				n, ok := m[on+".reports"]
				return sum(m[on+".reports_file"]), sum(n), ok
			}},
	}
}

// withIdle marks the burst and frame metrics for a comparison with idle:
// the goal "a GUI burst's p95 within 2.0x of idle" is read from them.
func withIdle(defs []metricDef) []metricDef {
	for i := range defs {
		defs[i].vsIdle = defs[i].probe == "burst" || defs[i].probe == "frame"
	}
	return defs
}

// requiredMetrics are the probe/metric pairs every arm reports.
var requiredMetrics = []string{
	"frame/late_p99_ms", "frame/missed_ticks",
	"burst/p50_ms", "burst/p95_ms", "burst/p99_ms",
	"read/p99_ms", "fsync/p50_ms",
	"save-sync/p95_ms", "save-sync/over_16.7ms",
	"save-statefile/p95_ms", "save-statefile/over_16.7ms", "save-statefile/durable_p95_ms",
	"ui/late_p95_ms_sync", "ui/missed_ticks_sync", "ui/late_p95_ms_statefile", "ui/missed_ticks_statefile",
	"ui+stall/late_p95_ms_sync", "ui+stall/missed_ticks_sync", "ui+stall/reports_naming_file_sync",
	"ui+stall/late_p95_ms_statefile", "ui+stall/missed_ticks_statefile", "ui+stall/reports_naming_file_statefile",
}

// armStat is one metric of one arm, ready for the arithmetic.
type armStat struct {
	stat     statFunc
	n, k     int       // samples (quantile, max), trials and count (fraction), rounds (rate)
	perRound []float64 // NaN where a round does not support the figure
}

// derive builds the metric from an arm's rounds; ok is false when no
// round has its series.
func (d metricDef) derive(rounds []map[string][]float64) (armStat, bool) {
	switch d.kind {
	case kindQuantile, kindMax:
		return d.deriveSamples(rounds)
	}
	num, den := make([]float64, len(rounds)), make([]float64, len(rounds))
	st := armStat{perRound: make([]float64, len(rounds))}
	any := false
	for r, m := range rounds {
		a, b, ok := d.parts(m)
		if !ok {
			return armStat{}, false // every arm runs every round: a gap is a missing series
		}
		any = true
		num[r], den[r] = a, b
		st.perRound[r] = a / b
		if b == 0 {
			st.perRound[r] = math.NaN()
		}
	}
	st.stat = func(w []int) float64 { return sumRatio(num, den, w) }
	st.k, st.n = int(math.Round(sum(num))), int(math.Round(sum(den)))
	if d.kind == kindRate {
		st.k, st.n = 0, len(rounds)
	}
	return st, any
}

func (d metricDef) deriveSamples(rounds []map[string][]float64) (armStat, bool) {
	per := make([][]float64, len(rounds))
	st := armStat{perRound: make([]float64, len(rounds))}
	for r, m := range rounds {
		xs, ok := m[d.series]
		if !ok {
			return armStat{}, false
		}
		per[r] = xs
		st.perRound[r] = maxOf(xs)
		if d.kind == kindQuantile {
			st.perRound[r] = math.NaN()
			if quotable(len(xs), d.q) {
				st.perRound[r] = percentile(xs, d.q)
			}
		}
	}
	p := newPooled(per)
	st.n = len(p.vals)
	st.stat = func(w []int) float64 { return p.quantile(w, d.q) }
	if d.kind == kindMax {
		st.stat = func(w []int) float64 { return p.quantile(w, 1) }
	}
	return st, len(rounds) > 0
}
