package main

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Interval settings. Rounds are the unit of resampling: samples within a
// window are not independent (one stall delays many ticks), rounds are
// closer to it, since every arm runs once per round in a shuffled order.
const (
	minCIRounds = 5                 // fewer rounds give a bootstrap with too few distinct resamples to trust
	bootIters   = 2000              // resamples per interval
	ciLevel     = 0.95              // two-sided
	wilsonZ     = 1.96              // the normal quantile for ciLevel
	tailMin     = 3                 // a quantile q is quoted only with n*(1-q) >= tailMin samples beyond it
	maxInvalid  = 0.05              // an interval is dropped when more resamples than this give no ratio
	ciLo        = (1 - ciLevel) / 2 // the interval runs from this percentile of the resamples to 1 minus it
)

// quotable reports whether n samples support quoting the q-quantile: at least
// tailMin samples must lie beyond it, so a p99 needs 300 and a p95 60.
// Below that the quantile is one of the few largest samples, and it moves
// with each of them.
func quotable(n int, q float64) bool {
	return float64(n)*(1-q) >= tailMin-1e-9
}

// wilson returns the Wilson score interval for k successes in n trials at
// z (Wilson 1927; Brown, Cai and DasGupta 2001, "Interval Estimation for a
// Binomial Proportion", recommend it over the normal approximation for
// small n and proportions near 0). It assumes independent trials, which
// ticks of one window are not quite, so read it as a lower bound on the
// uncertainty. n = 0 gives NaN, NaN.
func wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), z*z
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return max(0, centre-half), min(1, centre+half)
}

// statFunc computes one arm's statistic from round weights: w[i] is how many
// times round i is in the resample (all ones for the point estimate).
type statFunc func(w []int) float64

// compareFunc turns an arm's statistic and the base arm's into the figure
// reported: a ratio or a difference.
type compareFunc func(arm, base float64) float64

func ratio(a, b float64) float64 { return a / b }
func diff(a, b float64) float64  { return a - b }

// ones returns n weights of 1: every round once.
func ones(n int) []int {
	w := make([]int, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// bootstrap returns the percentile interval (Efron and Tibshirani 1993,
// "An Introduction to the Bootstrap", ch. 13) of cmp(a, b) over bootIters
// resamples of whole rounds. The resample is paired: the same rounds are
// drawn for both arms, because arms of one round ran minutes apart on the
// same machine, so what drifted between rounds cancels out. ok is false
// with fewer than minCIRounds rounds or when too many resamples give no
// finite value (a base of zero).
func bootstrap(a, b statFunc, rounds int, cmp compareFunc, rng *rand.Rand) (lo, hi float64, ok bool) {
	if rounds < minCIRounds {
		return math.NaN(), math.NaN(), false
	}
	w := make([]int, rounds)
	vals := make([]float64, 0, bootIters)
	for range bootIters {
		clear(w)
		for range rounds {
			w[rng.IntN(rounds)]++
		}
		if v := cmp(a(w), b(w)); !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	if float64(len(vals)) < (1-maxInvalid)*bootIters {
		return math.NaN(), math.NaN(), false
	}
	return percentile(vals, ciLo), percentile(vals, 1-ciLo), true
}

// pooled is one arm's samples of one series over all rounds, sorted, each
// tagged with its round, so a quantile of any resample of rounds is one walk
// over it instead of a sort.
type pooled struct {
	vals  []float64
	round []int
	n     []int // samples per round
}

func newPooled(perRound [][]float64) *pooled {
	type tagged struct {
		v float64
		r int
	}
	var all []tagged
	p := &pooled{n: make([]int, len(perRound))}
	for r, xs := range perRound {
		p.n[r] = len(xs)
		for _, x := range xs {
			all = append(all, tagged{x, r})
		}
	}
	slices.SortStableFunc(all, func(a, b tagged) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	for _, t := range all {
		p.vals = append(p.vals, t.v)
		p.round = append(p.round, t.r)
	}
	return p
}

// count returns how many samples the weighted rounds hold.
func (p *pooled) count(w []int) int {
	n := 0
	for r, c := range p.n {
		n += w[r] * c
	}
	return n
}

// quantile returns the q-quantile (type 7, as percentile) of the multiset in
// which round r's samples appear w[r] times; NaN when it holds none.
func (p *pooled) quantile(w []int, q float64) float64 {
	n := p.count(w)
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	vlo, vhi := p.rank(w, lo), p.rank(w, min(lo+1, n-1))
	return vlo + (h-float64(lo))*(vhi-vlo)
}

// rank returns the k-th smallest (0-based) of the weighted multiset.
func (p *pooled) rank(w []int, k int) float64 {
	seen := 0
	for i, v := range p.vals {
		seen += w[p.round[i]]
		if seen > k {
			return v
		}
	}
	return p.vals[len(p.vals)-1]
}

// sumRatio returns Σ w[r]·num[r] / Σ w[r]·den[r]: a fraction (count over
// trials) or a rate (amount over seconds) of the resampled rounds.
func sumRatio(num, den []float64, w []int) float64 {
	var a, b float64
	for r := range num {
		a += float64(w[r]) * num[r]
		b += float64(w[r]) * den[r]
	}
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
