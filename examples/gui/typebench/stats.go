package main

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Interval settings, as in this repository's bench (bench/ci.go): rounds
// are the unit of resampling, since keys of one run share its stalls.
const (
	minCIRounds = 5    // fewer rounds give too few distinct resamples to trust
	bootIters   = 2000 // resamples per interval
	tailMin     = 3    // a quantile q is quoted only with n*(1-q) >= tailMin samples beyond it
)

// quantile is the nearest-rank q-quantile of v, which it sorts.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// quotable reports whether n samples support quoting the q-quantile: a p95
// needs 60 samples, so that 3 lie beyond it.
func quotable(n int, q float64) bool {
	return float64(n)*(1-q) >= tailMin-1e-9
}

// pooledQuantile is the q-quantile of the samples of the rounds picked, a
// round counted as often as it is picked.
func pooledQuantile(perRound [][]float64, picked []int, q float64) float64 {
	var all []float64
	for _, r := range picked {
		all = append(all, perRound[r]...)
	}
	return quantile(all, q)
}

// allRounds is 0..n-1: every round once.
func allRounds(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// interval is the 95 % percentile bootstrap interval (Efron and Tibshirani
// 1993, ch. 13) of stat over resamples of whole rounds; ok is false with
// fewer than minCIRounds rounds.
func interval(rounds int, stat func(picked []int) float64, rng *rand.Rand) (lo, hi float64, ok bool) {
	if rounds < minCIRounds {
		return math.NaN(), math.NaN(), false
	}
	vals := make([]float64, 0, bootIters)
	picked := make([]int, rounds)
	for range bootIters {
		for i := range picked {
			picked[i] = rng.IntN(rounds)
		}
		if v := stat(picked); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) < bootIters/2 {
		return math.NaN(), math.NaN(), false
	}
	return quantile(vals, 0.025), quantile(vals, 0.975), true
}
