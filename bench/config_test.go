package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseArms(t *testing.T) {
	arms, err := parseArms("idle, default,nice:05,idleclass")
	require.NoError(t, err)
	require.Len(t, arms, 4)
	assert.Equal(t, arm{name: "nice:5", kind: armNice, nice: 5}, arms[2], "nice:05")
	assert.Equal(t, armIdleClass, arms[3].kind, "idleclass kind")
	for _, bad := range []string{"nice:20", "nice:-1", "nice:x", "fast", "idle,idle", ""} {
		_, err := parseArms(bad)
		assert.ErrorIs(t, err, errUsage, "parseArms(%q): got %v, want a usage error", bad, err)
	}
}

// TestDefaults checks that a plain run has enough rounds for intervals.
func TestDefaults(t *testing.T) {
	c, err := parseConfig(nil, io.Discard)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, c.rounds, minCIRounds, "default rounds")
	assert.Equal(t, uint64(1), c.seed, "default seed")
	assert.Equal(t, probeProcs, c.gomaxprocs, "default GOMAXPROCS")
	c, err = parseConfig([]string{"-seed", "9", "-gomaxprocs", "0", "-pace", "write=5"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, uint64(9), c.seed, "-seed")
	assert.Equal(t, 0, c.gomaxprocs, "-gomaxprocs 0: Go's default")
	assert.Equal(t, pace{write: 5e6}, c.pace, "-pace")
	assert.Nil(t, c.probes, "every probe by default")
	c, err = parseConfig([]string{"-probes", "burst, frame"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"burst", "frame"}, c.probes, "-probes")
}

func TestQuickDefaults(t *testing.T) {
	c, err := parseConfig([]string{"-quick"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 4*time.Second, c.duration, "quick duration")
	assert.Equal(t, 1, c.rounds, "quick rounds")
	assert.Len(t, c.arms, 6, "quick still runs every arm")

	c, err = parseConfig([]string{"-quick", "-rounds", "3", "-duration", "2s"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, c.duration, "an explicit -duration wins over -quick")
	assert.Equal(t, 3, c.rounds, "an explicit -rounds wins over -quick")
}

func TestParseConfigRejects(t *testing.T) {
	for _, args := range [][]string{{"-duration", "10ms"}, {"-rounds", "0"}, {"stray"}, {"-nope"}, {"-gomaxprocs", "-1"}, {"-pace", "disk=1"},
		{"-probes", "blit"}, {"-probes", "burst,burst"}, {"-probes", ","}} {
		_, err := parseConfig(args, io.Discard)
		assert.ErrorIs(t, err, errUsage, "parseConfig(%q): got %v, want a usage error", args, err)
	}
}

// TestParseConfigRefusesStallEnv checks that the bench will not run with
// OFFMAIN_STALL set: stall.Watch would obey it, and the quarters the table
// calls stall on or off would be something else.
func TestParseConfigRefusesStallEnv(t *testing.T) {
	t.Setenv(stallEnv, "budget=8ms")
	_, err := parseConfig(nil, io.Discard)
	require.ErrorIs(t, err, errUsage)
	assert.Contains(t, err.Error(), stallEnv, "the error names the variable")
}
