package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fiveRounds fills one arm with five rounds built by f.
func fiveRounds(res *results, armName string, f func(r int) map[string][]float64) {
	for r := range 5 {
		res.add(armName, r, f(r))
	}
}

func rowsByKey(rows []row) map[string]row {
	out := map[string]row{}
	for _, r := range rows {
		out[r.Arm+" "+r.Probe+"/"+r.Metric] = r
	}
	return out
}

func seq(from, n int, step float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(from) + step*float64(i)
	}
	return xs
}

// TestRowsPoolRounds checks per-round aggregation: a quantile is taken over
// the samples of all rounds pooled, with per-round figures only where a
// round alone has enough samples; a p99 is not quoted below 300 samples.
func TestRowsPoolRounds(t *testing.T) {
	res := newResults([]arm{{name: "default", kind: armDefault}}, 5)
	fiveRounds(res, "default", func(r int) map[string][]float64 {
		return map[string][]float64{"burst": seq(r*100, 100, 1), "read": seq(0, 50, 1)}
	})
	got := rowsByKey(res.rows(1))
	p50 := got["default burst/p50_ms"]
	assert.Equal(t, 500, p50.N, "pooled samples")
	assert.InDelta(t, percentile(seq(0, 500, 1), 0.5), float64(p50.Value), 1e-9, "p50 of the pool")
	assert.InDelta(t, 49.5, float64(p50.Rounds[0]), 1e-9, "round 1 alone")
	assert.InDelta(t, 449.5, float64(p50.Rounds[4]), 1e-9, "round 5 alone")
	p99 := got["default burst/p99_ms"]
	assert.True(t, p99.Quoted, "p99 of 500 samples is quoted")
	assert.True(t, math.IsNaN(float64(p99.Rounds[0])), "p99 of one round of 100: got %v, want none", p99.Rounds[0])
	r99 := got["default read/p99_ms"]
	assert.False(t, r99.Quoted, "p99 of 250 samples: got quoted, want not")
	assert.Equal(t, 250, r99.N, "n is shown even when not quoted")
}

// TestRowsFractionsAndRates checks counts over rounds (k/n and Wilson) and
// the agents' throughput: bytes over the seconds of every window.
func TestRowsFractionsAndRates(t *testing.T) {
	res := newResults([]arm{{name: "default", kind: armDefault}, {name: "agent", kind: armAgent}}, 5)
	for _, a := range []string{"default", "agent"} {
		fiveRounds(res, a, func(r int) map[string][]float64 {
			total := []float64{1, 2, 20, 3} // one frame of four ran long
			w := 200e6
			if a == "agent" {
				total, w = []float64{1, 2, 3, 4}, 50e6
			}
			return map[string][]float64{"frame.total": total, "frame.skipped": {2},
				"agent.write": {w}, "agent.secs": {2}}
		})
	}
	got := rowsByKey(res.rows(1))
	missed := got["default frame/missed_ticks"]
	assert.Equal(t, [2]int{15, 30}, [2]int{missed.K, missed.N}, "missed ticks k/n: 1 long + 2 skipped of 6, five rounds")
	lo, hi := wilson(15, 30, wilsonZ)
	assert.Equal(t, [2]optFloat{optFloat(lo), optFloat(hi)}, missed.Wilson, "Wilson interval")
	c := got["agent frame/missed_ticks"].VsDefault
	require.NotNil(t, c)
	assert.Equal(t, "difference", c.Kind, "fractions compare by difference")
	assert.InDelta(t, 10.0/30-0.5, float64(c.Value), 1e-12, "difference")
	assert.InDelta(t, float64(c.Value), float64(c.Lo), 1e-12, "identical rounds: no spread")

	wr := got["default agents/write_MB_per_s"]
	assert.InDelta(t, 100, float64(wr.Value), 1e-9, "200 MB in 2 s")
	assert.Equal(t, 5, wr.N, "rates count rounds")
	cw := got["agent agents/write_MB_per_s"].VsDefault
	require.NotNil(t, cw)
	assert.InDelta(t, 0.25, float64(cw.Value), 1e-12, "agent wrote a quarter of default")
}

// TestRowsCompareWithIdle checks that burst gets a ratio to idle and that a
// row of another probe does not.
func TestRowsCompareWithIdle(t *testing.T) {
	res := newResults([]arm{{name: "idle", kind: armIdle}, {name: "default", kind: armDefault}}, 5)
	fiveRounds(res, "idle", func(r int) map[string][]float64 {
		return map[string][]float64{"burst": seq(1, 100, 0.01), "read": seq(1, 100, 0.01)}
	})
	fiveRounds(res, "default", func(r int) map[string][]float64 {
		return map[string][]float64{"burst": seq(3, 100, 0.03), "read": seq(1, 100, 0.01)}
	})
	got := rowsByKey(res.rows(1))
	c := got["default burst/p95_ms"].VsIdle
	require.NotNil(t, c)
	assert.InDelta(t, 3, float64(c.Value), 1e-9, "ratio to idle")
	assert.InDelta(t, 3, float64(c.Lo), 1e-9, "identical rounds: low")
	assert.Nil(t, got["default read/p99_ms"].VsIdle, "read: no ratio to idle")
	assert.Nil(t, got["idle burst/p95_ms"].VsIdle, "idle against itself")
}

// TestRowsStallOnAgainstOff checks the ui loops' rows with stall on: each is
// compared with the same figure with stall off in the same arm, not with
// default, and the reports row counts those naming the file over all rounds.
func TestRowsStallOnAgainstOff(t *testing.T) {
	res := newResults([]arm{{name: "default", kind: armDefault}, {name: "agent", kind: armAgent}}, 5)
	for _, a := range []string{"default", "agent"} {
		fiveRounds(res, a, func(r int) map[string][]float64 {
			return map[string][]float64{
				"ui-sync.late": seq(1, 100, 0.01), "ui-sync+stall.late": seq(2, 100, 0.02),
				"ui-sync": {1, 20}, "ui-sync.skipped": {0}, "ui-sync+stall": {1, 20, 30}, "ui-sync+stall.skipped": {1},
				"ui-sync+stall.reports": {float64(r)}, "ui-sync+stall.reports_file": {float64(r / 2)},
			}
		})
	}
	got := rowsByKey(res.rows(1))
	late := got["agent ui+stall/late_p95_ms_sync"]
	require.NotNil(t, late.VsStallOff, "late_p95 with stall on: a comparison with stall off")
	assert.Equal(t, stallOffBase, late.VsStallOff.Base)
	assert.InDelta(t, 2, float64(late.VsStallOff.Value), 1e-9, "ratio on/off")
	assert.InDelta(t, 2, float64(late.VsStallOff.Lo), 1e-9, "identical rounds: low")
	assert.Nil(t, late.VsDefault, "stall on: compared with stall off, not with default")
	assert.NotNil(t, got["agent ui/late_p95_ms_sync"].VsDefault, "stall off: compared with default")
	assert.Nil(t, got["agent ui/late_p95_ms_sync"].VsStallOff, "stall off: no comparison with itself")

	missed := got["default ui+stall/missed_ticks_sync"]
	assert.Equal(t, [2]int{15, 20}, [2]int{missed.K, missed.N}, "missed ticks with stall on: 2 long + 1 skipped of 4, five rounds")
	require.NotNil(t, missed.VsStallOff)
	assert.InDelta(t, 0.75-0.5, float64(missed.VsStallOff.Value), 1e-12, "difference on - off")

	reports := got["default ui+stall/reports_naming_file_sync"]
	assert.Equal(t, [2]int{0 + 0 + 1 + 1 + 2, 0 + 1 + 2 + 3 + 4}, [2]int{reports.K, reports.N}, "reports naming the file / reports")
	assert.Nil(t, reports.VsDefault, "report counts: no comparison")
}
