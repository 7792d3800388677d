//go:build unix

package main

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/examples/composer/internal/tmux"
	"github.com/offmain/offmain/examples/internal/config"
)

// startUnderTmux runs this test binary as the app (appEnv) in a private tmux
// server and waits for its first full frame.
func startUnderTmux(t *testing.T, tmuxDir, stateDir, probe string) *tmux.Server {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	srv, err := tmux.Start(tmuxDir, 100, 30,
		[]string{appEnv + "=1", config.ProbeEnv + "=" + probe, "OFFMAIN_QOS=utility"},
		[]string{exe, "-dir", stateDir, "-chats", "general,build"})
	if errors.Is(err, tmux.ErrNotInstalled) {
		t.Skip("tmux is not installed: this test needs a real terminal to type into (.ci/run installs tmux)")
	}
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = srv.WaitScreen(ctx, helpLine, 20*time.Millisecond)
	require.NoError(t, err)
	return srv
}

// TestEndToEndUnderTmux runs the real binary in a real terminal: typing
// reaches the screen, the probe and the disk; ctrl+c quits through the
// flush hook; a restart shows the draft again; SIGTERM quits through the
// hook too, with status 128+15.
func TestEndToEndUnderTmux(t *testing.T) {
	dir := t.TempDir()
	state, probe := filepath.Join(dir, "state"), filepath.Join(dir, "probe.csv")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	srv := startUnderTmux(t, t.TempDir(), state, probe)
	for _, k := range []string{"h", "i", " ", "e", "2", "e"} {
		require.NoError(t, srv.SendText(k))
	}
	_, err := srv.WaitScreen(ctx, "┃ hi e2e", 20*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, srv.SendKeys("C-c"))
	status, screen, err := srv.WaitExit(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, status)
	assert.Contains(t, screen, "saved 3/3", "the hook's report printed at quit")
	assert.Equal(t, map[string]string{"general": "hi e2e"}, diskDrafts(t, state))

	f, err := os.Open(probe)
	require.NoError(t, err)
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, f.Close())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(recs), 2, "probe rows: %v", recs)
	assert.Equal(t, probeHeader, recs[0])
	for _, r := range recs[1:] {
		if r[1] == "ctrl+c" {
			continue // the quit key renders no frame of its own
		}
		for i, v := range r[2:] {
			assert.NotEmpty(t, v, "key %q hop %s", r[1], probeHeader[2+i])
		}
	}

	srv = startUnderTmux(t, t.TempDir(), state, probe)
	_, err = srv.WaitScreen(ctx, "┃ hi e2e", 20*time.Millisecond)
	require.NoError(t, err, "the draft is back after a restart")
	pid, err := srv.ProgramPID()
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	status, screen, err = srv.WaitExit(ctx)
	require.NoError(t, err)
	assert.Equal(t, 128+int(syscall.SIGTERM), status)
	assert.Contains(t, screen, "saved 3/3")
}
