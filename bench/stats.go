package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the q-quantile (0 <= q <= 1) of xs by linear
// interpolation between the closest ranks (Hyndman and Fan's type 7, the
// default of numpy and R). xs is not modified. It returns NaN for no samples.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// countOver returns how many of xs exceed limit.
func countOver(xs []float64, limit float64) float64 {
	n := 0
	for _, x := range xs {
		if x > limit {
			n++
		}
	}
	return float64(n)
}

// maxOf returns the largest of xs, NaN for none.
func maxOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Max(xs)
}

// ms converts a duration to float milliseconds, the unit of every latency series.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}
