package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"one sample", []float64{7}, 0.99, 7},
		{"median of odd count", []float64{3, 1, 2}, 0.5, 2},
		{"median of even count interpolates", []float64{4, 1, 3, 2}, 0.5, 2.5},
		{"minimum", []float64{5, 1, 9}, 0, 1},
		{"maximum", []float64{5, 1, 9}, 1, 9},
		// numpy.percentile([1..10], 99) = 9.91 (type 7).
		{"p99 of 1..10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.99, 9.91},
		{"p95 of 1..10", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 0.95, 9.55},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, percentile(tt.xs, tt.q), 1e-9, "percentile(%v, %v)", tt.xs, tt.q)
		})
	}
}

func TestPercentileLeavesInputAlone(t *testing.T) {
	xs := []float64{3, 1, 2}
	percentile(xs, 0.5)
	assert.Equal(t, []float64{3, 1, 2}, xs, "got input reordered, want it untouched")
}

func TestPercentileOfNothingIsNaN(t *testing.T) {
	assert.True(t, math.IsNaN(percentile(nil, 0.5)), "got a number for no samples, want NaN")
	assert.True(t, math.IsNaN(maxOf(nil)), "got a number for no samples, want NaN")
}

func TestCountOverIsStrict(t *testing.T) {
	xs := []float64{1, frameBudgetMs, frameBudgetMs + 0.001, 100}
	assert.Equal(t, 2.0, countOver(xs, frameBudgetMs), "got count, want 2 (a frame of exactly the budget is on time)")
}

func TestCombine(t *testing.T) {
	rounds := []float64{5, 1, 30}
	assert.Equal(t, 5.0, aggMedian.combine(rounds), "median: got, want 5")
	assert.Equal(t, 36.0, aggSum.combine(rounds), "sum: got, want 36")
	assert.Equal(t, 30.0, aggMax.combine(rounds), "max: got, want 30")
}

// TestRowsMediansAndSums checks that a latency is the median of its
// per-round values and a count the sum of its per-round counts.
func TestRowsMediansAndSums(t *testing.T) {
	res := newResults([]arm{{name: "default", kind: armDefault}}, 3)
	for r, burst := range [][]float64{{1, 2, 3}, {10, 20, 30}, {4, 5, 6}} {
		res.add("default", r, map[string][]float64{"burst": burst, "save-sync": {1, 20, 40}})
	}
	got := map[string]row{}
	for _, r := range res.rows() {
		got[r.Probe+"/"+r.Metric] = r
	}
	p50 := got["burst/p50_ms"]
	assert.Equal(t, []float64{2, 20, 5}, p50.Rounds, "burst p50 per round")
	assert.Equal(t, 5.0, p50.Value, "burst p50: got, want the median of 2, 20, 5")
	over := got["save-sync/over_frame"]
	assert.Equal(t, 6.0, over.Value, "save-sync over_frame: got, want 2 a round summed over 3")
	assert.Equal(t, aggSum, over.Agg, "save-sync over_frame aggregate")
	_, ok := got["agent-cost/job_ms"]
	assert.False(t, ok, "got an agent-cost row for an arm without the series, want none")
}

// TestRowsReportSkippedTicks checks that the ticks a stalled I/O or save
// probe missed reach the table, summed over the rounds.
func TestRowsReportSkippedTicks(t *testing.T) {
	res := newResults([]arm{{name: "default", kind: armDefault}}, 2)
	for r := range 2 {
		res.add("default", r, map[string][]float64{
			"read": {1}, "read.skipped": {2}, "fsync": {1}, "fsync.skipped": {3},
			"save-sync": {1}, "save-sync.skipped": {4}, "save-statefile": {1}, "save-statefile.skipped": {0},
		})
	}
	got := map[string]float64{}
	for _, r := range res.rows() {
		got[r.Probe+"/"+r.Metric] = r.Value
	}
	for metric, want := range map[string]float64{"read/skipped_ticks": 4, "fsync/skipped_ticks": 6,
		"save-sync/skipped_ticks": 8, "save-statefile/skipped_ticks": 0} {
		v, ok := got[metric]
		if assert.True(t, ok, "got no %s row, want one", metric) {
			assert.Equal(t, want, v, "%s: got, want the sum over rounds", metric)
		}
	}
}
