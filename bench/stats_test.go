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
	xs := []float64{1, overMs, overMs + 0.001, 100}
	assert.Equal(t, 2.0, countOver(xs, overMs), "got count, want 2 (a call of exactly the threshold is on time)")
}
