package main

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errInjected = errors.New("injected disk error")

// TestProbeErrorsAbort checks that a probe's I/O error ends it with a message
// naming the probe, and that a panic becomes an error instead of a crash.
func TestProbeErrorsAbort(t *testing.T) {
	_, err := runProbe(t.Context(), "fsync", func(ctx context.Context) (map[string][]float64, error) {
		return everyProbe(ctx, "fsync", time.Millisecond, func(int) error { return errInjected })
	})
	require.ErrorIs(t, err, errInjected)
	assert.Contains(t, err.Error(), "fsync probe: injected disk error", "error message")

	_, err = runProbe(t.Context(), "frame", func(context.Context) (map[string][]float64, error) {
		panic("boom")
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "frame probe panicked: boom", "error message")
}

// TestEveryProbeStopsWithContext checks that a probe returns its samples,
// without error, once its window ends.
func TestEveryProbeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	series, err := everyProbe(ctx, "read", time.Millisecond, func(int) error {
		if calls++; calls == 3 {
			cancel()
		}
		return nil
	})
	require.NoError(t, err)
	assert.Len(t, series["read"], 3, "samples: got, want one per call")
}

func TestLowerSpecRoundTrip(t *testing.T) {
	for _, s := range []lowerSpec{{nice: 5, ioBE7: true}, {idle: true}, {nice: 19, idle: true}} {
		got, err := parseLowerSpec(s.String())
		require.NoError(t, err)
		assert.Equal(t, s, got, "parseLowerSpec(%q)", s.String())
	}
	_, err := parseLowerSpec("nice=x")
	assert.Error(t, err, "nice=x: got nil, want an error")
}

func TestActiveScheduler(t *testing.T) {
	assert.Equal(t, "mq-deadline", parseSchedFile("", "none [mq-deadline] kyber bfq\n").active)
	assert.Equal(t, "none", parseSchedFile("", "none\n").active)
}

// TestEveryProbeCountsSkippedTicks checks that a probe stalled past several
// ticks reports the ticks it never ran (coordinated omission: without them a
// 175 ms stall is one sample, and the three 50 ms ticks it swallowed vanish).
// The op's wait on a timer stands for a slow operation on synctest's fake clock.
func TestEveryProbeCountsSkippedTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		calls := 0
		series, err := everyProbe(ctx, "fsync", 50*time.Millisecond, func(int) error {
			switch calls++; calls {
			case 2:
				<-time.NewTimer(175 * time.Millisecond).C // due at 100 ms, ends at 275: ticks 150, 200, 250 missed
			case 4:
				cancel()
			}
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, []float64{0, 175, 0, 0}, series["fsync"], "durations in ms")
		assert.Equal(t, []float64{3}, series["fsync.skipped"], "skipped ticks: got, want the 3 the stall swallowed")
	})
}

// TestAppRunsOnlyItsProbes: -probes leaves the app's other probes out of
// the window, so that none of their work (here the disk probes' I/O and
// the saves) competes with those measured, and no figure of theirs is
// made; the probes listed for the flag are the app's.
func TestAppRunsOnlyItsProbes(t *testing.T) {
	a, err := newApp(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, a.close(context.Background())) })
	assert.ElementsMatch(t, probeNames, slices.Collect(maps.Keys(a.probes())), "-probes names the app's probes")

	a.only = []string{"burst", "frame"}
	d := time.Second
	series, _, err := a.run(t.Context(), d, [4]string{}, func() {})
	require.NoError(t, err)
	require.NoError(t, checkSamples(series, d, [4]string{}))
	assert.NotEmpty(t, series["burst"], "burst ran")
	assert.NotEmpty(t, series["frame.total"], "frame ran")
	for k := range series {
		probe, _, _ := strings.Cut(k, ".")
		probe = strings.TrimSuffix(probe, stallOn)
		assert.False(t, probe == stallSeries || slices.Contains(probeNames, probe) && !slices.Contains(a.only, probe),
			"%s: a series of a probe left out, or of stall without a ui loop", k)
	}
	for _, k := range []string{"read", "fsync", "save-sync", "save-statefile", uiSync, uiStatefile} {
		assert.NotContains(t, series, k, "a probe left out has no series")
	}
}
