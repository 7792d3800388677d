package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWilson checks the Wilson score interval against values computed by
// hand from its formula (and matching R's prop.test(correct = FALSE)).
func TestWilson(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{5, 10, 0.236593, 0.763407},
		{0, 10, 0, 0.277540},
		{10, 10, 0.722460, 1},
		{1, 100, 0.001767, 0.054488},
		{30, 200, 0.107135, 0.206057},
	}
	for _, tt := range tests {
		lo, hi := wilson(tt.k, tt.n, 1.96)
		assert.InDelta(t, tt.lo, lo, 1e-5, "wilson(%d, %d) low", tt.k, tt.n)
		assert.InDelta(t, tt.hi, hi, 1e-5, "wilson(%d, %d) high", tt.k, tt.n)
	}
	lo, hi := wilson(0, 0, 1.96)
	assert.True(t, math.IsNaN(lo) && math.IsNaN(hi), "wilson(0, 0): got [%v, %v], want NaN", lo, hi)
}

// TestQuotable checks the sample counts from which a quantile is quoted:
// three samples beyond it.
func TestQuotable(t *testing.T) {
	tests := []struct {
		n    int
		q    float64
		want bool
	}{
		{299, 0.99, false}, {300, 0.99, true},
		{59, 0.95, false}, {60, 0.95, true},
		{6, 0.50, true}, {5, 0.50, false},
		{1000, 1, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, quotable(tt.n, tt.q), "quotable(%d, %v)", tt.n, tt.q)
	}
}

// TestPooledQuantileMatchesPercentile checks the weighted walk against
// percentile of the multiset it stands for, for random round weights.
func TestPooledQuantileMatchesPercentile(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	rounds := [][]float64{{5, 1, 9, 9}, {2, 2}, {7, 3, 8}, {4}, {6, 0.5, 11}}
	p := newPooled(rounds)
	require.Equal(t, []int{4, 2, 3, 1, 3}, p.n, "samples per round")
	for range 200 {
		w := make([]int, len(rounds))
		for range len(rounds) {
			w[rng.IntN(len(rounds))]++
		}
		var multiset []float64
		for r, c := range w {
			for range c {
				multiset = append(multiset, rounds[r]...)
			}
		}
		for _, q := range []float64{0, 0.5, 0.95, 0.99, 1} {
			assert.InDelta(t, percentile(multiset, q), p.quantile(w, q), 1e-12, "q %v, weights %v", q, w)
		}
	}
	assert.True(t, math.IsNaN(p.quantile(make([]int, 5), 0.5)), "no rounds drawn: got a number, want NaN")
}

func TestSumRatio(t *testing.T) {
	num, den := []float64{1, 4, 0}, []float64{10, 20, 0}
	assert.InDelta(t, 5.0/30, sumRatio(num, den, []int{1, 1, 1}), 1e-12, "all rounds once")
	assert.InDelta(t, 9.0/50, sumRatio(num, den, []int{1, 2, 0}), 1e-12, "round 2 twice")
	assert.True(t, math.IsNaN(sumRatio(num, den, []int{0, 0, 3})), "zero denominator: want NaN")
}

// TestBootstrapConstantRatio checks that an arm whose every round is twice
// the base's gets the interval [2, 2] whatever rounds are drawn.
func TestBootstrapConstantRatio(t *testing.T) {
	base := []float64{1, 3, 2, 5, 4}
	a, b := make([]float64, 5), make([]float64, 5)
	for i, v := range base {
		a[i], b[i] = 2*v, v
	}
	one := []float64{1, 1, 1, 1, 1}
	lo, hi, ok := bootstrap(func(w []int) float64 { return sumRatio(a, one, w) },
		func(w []int) float64 { return sumRatio(b, one, w) }, 5, ratio, rand.New(rand.NewPCG(1, 2)))
	require.True(t, ok)
	assert.InDelta(t, 2, lo, 1e-12, "low")
	assert.InDelta(t, 2, hi, 1e-12, "high")
}

// TestBootstrapMatchesEnumeration checks the Monte Carlo interval against
// the exact bootstrap distribution of a 5-round data set: every one of the
// 5^5 equally likely draws of rounds, enumerated.
func TestBootstrapMatchesEnumeration(t *testing.T) {
	a := []float64{10, 14, 9, 20, 12}
	b := []float64{10, 10, 10, 10, 10}
	stat := func(xs []float64) statFunc {
		return func(w []int) float64 { return sumRatio(xs, []float64{1, 1, 1, 1, 1}, w) }
	}
	var exact []float64
	idx := make([]int, 5)
	for code := range 3125 {
		w := make([]int, 5)
		for i, c := 0, code; i < 5; i, c = i+1, c/5 {
			idx[i] = c % 5
			w[idx[i]]++
		}
		exact = append(exact, stat(a)(w)-stat(b)(w))
	}
	slices.Sort(exact)
	lo, hi, ok := bootstrap(stat(a), stat(b), 5, diff, rand.New(rand.NewPCG(42, 0)))
	require.True(t, ok)
	assert.InDelta(t, percentile(exact, 0.025), lo, 0.25, "low: got %v", lo)
	assert.InDelta(t, percentile(exact, 0.975), hi, 0.25, "high: got %v", hi)
	assert.Less(t, lo, 3.0, "the interval holds the point figure 3")
	assert.Greater(t, hi, 3.0, "the interval holds the point figure 3")

	lo2, hi2, _ := bootstrap(stat(a), stat(b), 5, diff, rand.New(rand.NewPCG(42, 0)))
	assert.Equal(t, [2]float64{lo, hi}, [2]float64{lo2, hi2}, "same seed: got a different interval")
}

func TestBootstrapNeedsRoundsAndABase(t *testing.T) {
	f := func(w []int) float64 { return float64(w[0]) }
	_, _, ok := bootstrap(f, f, minCIRounds-1, ratio, rand.New(rand.NewPCG(1, 1)))
	assert.False(t, ok, "%d rounds: got an interval, want none", minCIRounds-1)
	zero := func([]int) float64 { return 0 }
	_, _, ok = bootstrap(f, zero, minCIRounds, ratio, rand.New(rand.NewPCG(1, 1)))
	assert.False(t, ok, "base of zero: got an interval, want none")
}
