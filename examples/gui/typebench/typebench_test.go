package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestJoinKeysKeepsKeysThatShareAFrame(t *testing.T) {
	// Three keys; the second and third reached the app in one frame, so
	// the probe has changes to lengths 1 and 3 only.
	rows := map[int]sample{1: {frame: 10}, 3: {frame: 30}}
	got := joinKeys(rows, []int64{1, 2, 3}, []int64{4, 5, 6})
	require.Len(t, got, 3, "every key shown is joined")
	assert.Equal(t, []int64{10, 30, 30}, []int64{got[0].frame, got[1].frame, got[2].frame})
	assert.Equal(t, int64(2), got[1].sent)
}

func TestJoinKeysLeavesOutAMissedKey(t *testing.T) {
	got := joinKeys(map[int]sample{1: {frame: 10}}, []int64{1, 2}, []int64{3, 4})
	assert.Len(t, got, 1, "the second key reached no change")
}

func TestQuantileNearestRank(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	assert.Equal(t, 5.0, quantile(v, 0.5))
	assert.Equal(t, 10.0, quantile(v, 0.95))
	assert.Equal(t, 1.0, quantile(v, 0))
	assert.True(t, math.IsNaN(quantile(nil, 0.5)))
	assert.False(t, quotable(59, 0.95))
	assert.True(t, quotable(60, 0.95))
}

func TestIntervalCoversAndNeedsRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Rounds whose keys all equal the round's number: a resample's median
	// lies in [0, 9], the point estimate 4 or 5.
	perRound := make([][]float64, 10)
	for r := range perRound {
		for range 20 {
			perRound[r] = append(perRound[r], float64(r))
		}
	}
	lo, hi, ok := interval(10, func(k []int) float64 { return pooledQuantile(perRound, k, 0.5) }, rng)
	require.True(t, ok)
	assert.LessOrEqual(t, lo, 4.0)
	assert.GreaterOrEqual(t, hi, 5.0)
	assert.Less(t, hi-lo, 9.0, "the interval is narrower than the range")
	_, _, ok = interval(4, func([]int) float64 { return 0 }, rng)
	assert.False(t, ok, "4 rounds are too few for an interval")
}

func TestDiffIsPaired(t *testing.T) {
	// Each round drifts by its number, in both arms alike; the arm is 2 ms
	// slower in every round. A paired resample sees exactly +2.
	a, b := &result{}, &result{}
	for r := range 6 {
		var sa, sb []sample
		for k := range 60 {
			v := int64(r*10+k%3) * 1e6
			sb = append(sb, sample{frame: v + 1})
			sa = append(sa, sample{frame: v + 2e6 + 1})
		}
		a.rounds = append(a.rounds, roundResult{samples: sa})
		b.rounds = append(b.rounds, roundResult{samples: sb})
	}
	assert.Equal(t, "+2.0 [+2.0, +2.0]", diffCell(a, b, rand.New(rand.NewPCG(3, 4))))
}

func TestParseSchedstat(t *testing.T) {
	v, ok := parseSchedstat("123 456 7\n")
	require.True(t, ok)
	assert.Equal(t, [2]int64{123, 456}, v)
	_, ok = parseSchedstat("garbage")
	assert.False(t, ok)
}

func TestThreadsUseReadsThisProcess(t *testing.T) {
	before := threadsUse(os.Getpid())
	for t0 := time.Now(); time.Since(t0) < 20*time.Millisecond; { // on a CPU, not asleep
	}
	d := threadsUse(os.Getpid()).minus(before)
	assert.Positive(t, d.cpu, "this process ran between the reads")
}

func TestSleepLate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("measured on Linux only")
	}
	late, ok := sleepLate(time.Millisecond)
	require.True(t, ok)
	assert.GreaterOrEqual(t, late, time.Duration(0), "nanosleep(2) never returns early without a signal")
}

func TestLateCellNeedsAHundredSamples(t *testing.T) {
	r := &result{rounds: []roundResult{{calib: calibUse{late: make([]int64, 299)}}}}
	assert.Equal(t, "-", lateCell(r), "299 sleeps are too few for a p99")
	r.rounds[0].calib.late = nil
	for i := range 300 {
		r.rounds[0].calib.late = append(r.rounds[0].calib.late, int64(i+1)*1e6)
	}
	assert.Equal(t, "297 / 300", lateCell(r), "the nearest-rank p99 of 1..300 ms")
}

func TestReadFramesKeepsTheWindow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keys-frames.csv")
	require.NoError(t, os.WriteFile(p, []byte("start_ns,end_ns,changes\n5,9,0\n10,20,1\n30,35,0\n40,50,2\n"), 0o600))
	got, err := readFrames(p, 10, 40)
	require.NoError(t, err)
	assert.Equal(t, []frame{{10, 20, 1}, {30, 35, 0}}, got)
	assert.Equal(t, "keys-frames.csv", filepath.Base(framesPath(filepath.Join(filepath.Dir(p), "keys.csv"))))
}

func TestReadFramesRefusesAnEmptyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keys-frames.csv")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	_, err := readFrames(p, 0, 1)
	assert.ErrorContains(t, err, "no header")
}
