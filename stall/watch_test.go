package stall_test

import (
	rtrace "runtime/trace"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/stall"
)

func TestRecorderInUse(t *testing.T) {
	fr := rtrace.NewFlightRecorder(rtrace.FlightRecorderConfig{})
	require.NoError(t, fr.Start())
	stop, err := stall.Watch(stall.Options{})
	assert.ErrorIs(t, err, stall.ErrRecorderInUse)
	stop() // does nothing
	fr.Stop()

	stop, err = stall.Watch(stall.Options{})
	require.NoError(t, err)
	stop2, err := stall.Watch(stall.Options{})
	assert.ErrorIs(t, err, stall.ErrRecorderInUse, "a second Watch")
	stop2()
	assert.Error(t, fr.Start(), "the app's recorder while stall watches")
	stop()
	stop() // again: nothing
	require.NoError(t, fr.Start(), "the app's recorder after stop")
	fr.Stop()
}

// watching reports whether stall holds the flight recorder.
func watching(t *testing.T) bool {
	fr := rtrace.NewFlightRecorder(rtrace.FlightRecorderConfig{})
	if err := fr.Start(); err != nil {
		return true
	}
	fr.Stop()
	return false
}

func TestEnv(t *testing.T) {
	for _, tc := range []struct {
		env      string
		envOnly  bool
		watching bool
	}{
		{env: "", watching: true},
		{env: "", envOnly: true},
		{env: "off"},
		{env: "0", envOnly: true},
		{env: "1", envOnly: true, watching: true},
		{env: "on", watching: true},
		{env: "budget=8ms", envOnly: true, watching: true},
	} {
		t.Setenv("OFFMAIN_STALL", tc.env)
		stop, err := stall.Watch(stall.Options{EnvOnly: tc.envOnly})
		require.NoError(t, err, "OFFMAIN_STALL=%q", tc.env)
		assert.Equal(t, tc.watching, watching(t), "watching with OFFMAIN_STALL=%q, EnvOnly %v", tc.env, tc.envOnly)
		stop()
	}
	for _, env := range []string{"yes", "budget=", "budget=-1s", "budget=8"} {
		t.Setenv("OFFMAIN_STALL", env)
		_, err := stall.Watch(stall.Options{})
		if assert.Error(t, err, "OFFMAIN_STALL=%q", env) {
			assert.Contains(t, err.Error(), "OFFMAIN_STALL")
		}
		assert.False(t, watching(t), "watching with OFFMAIN_STALL=%q", env)
	}
}

// TestEnvBudget: the variable's budget replaces the one in Options.
func TestEnvBudget(t *testing.T) {
	t.Setenv("OFFMAIN_STALL", "budget=1ms")
	r, w, _ := blockingPipe(t)
	done := watch(t, stall.Options{Budget: time.Hour})
	var wg sync.WaitGroup
	readAfter(t, &wg, r, w, 5*time.Millisecond)
	got := done()
	wg.Wait()
	require.Len(t, got, 1, "reports of a 5 ms read with a 1 ms budget")
}
