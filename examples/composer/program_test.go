package main

import (
	"errors"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recv returns the next value from ch, failing the test after a bound.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s within 10s", what)
		panic("unreachable")
	}
}

// TestProgramTypingProbeAndQuit runs the real bubbletea program, with a pipe
// as its keyboard and a virtual terminal (x/vt) as its screen: typed keys
// reach the draft store and the screen, the probe records every hop in
// order, and ctrl+c ends the program and runs the flush hook.
func TestProgramTypingProbeAndQuit(t *testing.T) {
	dir := t.TempDir()
	a, err := openApp(testConfig(dir, false), nil)
	require.NoError(t, err)
	rows := make(chan row, 64)
	a.probe.p.Store(startProbe(io.Discard, func(r row) { rows <- r }))
	screen := vt.NewSafeEmulator(100, 30)
	keys, typing := io.Pipe()
	defer typing.Close() // ends bubbletea's input reader
	p := a.program(keys, screen)
	ran := make(chan error, 1)
	go func() {
		_, err := p.Run()
		ran <- err
	}()
	p.Send(tea.WindowSizeMsg{Width: 100, Height: 30}) // no tty to ask

	for _, k := range "abc" {
		_, err := typing.Write([]byte(string(k)))
		require.NoError(t, err)
		r := recv(t, rows, "probe row")
		assert.Equal(t, string(k), r.key)
		for h := hopRead; h < nHops; h++ {
			require.NotZero(t, r.t[h], "key %q hop %d stamped", r.key, h)
			if h > hopRead {
				assert.LessOrEqual(t, r.t[h-1], r.t[h], "key %q hop %d after hop %d", r.key, h, h-1)
			}
		}
	}
	assert.Equal(t, "abc", a.state.Saves.Draft("general"))
	// The row of "c" came after its frame's write returned: it is on screen.
	assert.Contains(t, ansi.Strip(screen.Render()), "┃ abc", "the composer on the virtual screen")
	assert.Contains(t, ansi.Strip(screen.Render()), "offmain saves │ qos utility │ no agents")

	_, err = typing.Write([]byte{0x03}) // ctrl+c
	require.NoError(t, err)
	err = recv(t, ran, "end of the program")
	require.NoError(t, err)
	rep := a.shutdown()
	assert.True(t, rep.Saved, "flush report: %v", rep)
	assert.Len(t, rep.Items, 4, "drafts, anchors, transcripts and the agents")
	assert.Equal(t, map[string]string{"general": "abc"}, diskDrafts(t, dir), "drafts on disk after quit")
	assert.False(t, errors.Is(err, tea.ErrProgramKilled))
}
