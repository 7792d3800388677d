package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTickAccount checks that a tick misses when its frame ends after the
// next tick, and that skipped ticks are both scheduled and missed.
func TestTickAccount(t *testing.T) {
	p := ms(frameRate) // 8.33 ms
	tests := []struct {
		name              string
		totals            []float64
		skipped           float64
		missed, scheduled float64
	}{
		{"all on time", []float64{2, 3, p}, 0, 0, 3},
		{"one long frame swallows two ticks", []float64{2, 25, 2}, 2, 3, 5},
		{"just over a period", []float64{p + 0.001}, 0, 1, 1},
		{"nothing ran", nil, 4, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missed, scheduled := tickAccount(tt.totals, tt.skipped, p)
			assert.Equal(t, tt.missed, missed, "missed")
			assert.Equal(t, tt.scheduled, scheduled, "scheduled")
		})
	}
	assert.InDelta(t, 2*p, overMs, 1e-12, "over threshold: two ticks")
}

func TestParsePace(t *testing.T) {
	p, err := parsePace("write=20, read=2.5,meta=2000")
	require.NoError(t, err)
	assert.Equal(t, pace{write: 20e6, read: 2.5e6, meta: 2000}, p)
	assert.Equal(t, 2000.0, p.forMode("meta"), "meta rate")
	assert.Equal(t, 0.0, p.forMode("spin"), "spinners are never paced")
	for _, bad := range []string{"write", "write=0", "write=-1", "disk=5", "read=x"} {
		_, err := parsePace(bad)
		assert.ErrorIs(t, err, errUsage, "parsePace(%q)", bad)
	}
	p, err = parsePace("")
	require.NoError(t, err)
	assert.Equal(t, pace{}, p, "empty: closed loops")
}

func TestPaceDelay(t *testing.T) {
	s := time.Second
	assert.Equal(t, 500*time.Millisecond, paceDelay(3e6, 2e6, s), "ahead by half a second")
	assert.Equal(t, time.Duration(0), paceDelay(1e6, 2e6, s), "behind: no wait")
	assert.Equal(t, time.Duration(0), paceDelay(1e9, 0, 0), "no rate: no wait")
}
