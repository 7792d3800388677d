package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/examples/composer/internal/tmux"
)

// TestStallNamesNoStateFile runs the app in a real terminal with
// OFFMAIN_STALL=1 and both chats' agents busy (a spinner per CPU and 1 MiB
// writes with an fsync every 8 MiB, each), types into one chat, switches to
// the other and back, scrolls the transcript and sends, quits with ctrl+c,
// and reads stall's reports in composer.log: none may concern the app's
// state (see aboutState). With -sync-saves, which writes every draft on the
// UI loop, and a budget of 1 ms, so that every such write is over it, the
// reports do: the check can fail.
func TestStallNamesNoStateFile(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       string // OFFMAIN_STALL
		args      []string
		wantState bool // reports about the state: want some (true) or none
	}{
		{"offmain", "1", nil, false},
		{"sync saves", "budget=1ms", []string{"-sync-saves"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			reports := stallSession(t, state, tc.env, tc.args)
			var about []string
			for _, r := range reports {
				if aboutState(r, state) {
					about = append(about, r)
				}
			}
			if tc.wantState {
				assert.NotEmpty(t, about, "with saves on the UI loop: got no report about the state in %s, want some; all reports:\n%s", state, strings.Join(reports, "\n"))
			} else {
				assert.Empty(t, about, "reports about the state in %s: got these, want none", state)
			}
		})
	}
}

// statePkgs are the packages that read and write the app's state: a wait
// of the UI loop inside them is a wait for the state, whether or not stall
// could name the file (it names it only when its sampler saw the call).
var statePkgs = []string{
	"github.com/offmain/offmain/statefile.", "github.com/offmain/offmain/drafts.",
	"github.com/offmain/offmain/anchors.", "github.com/offmain/offmain/flush.",
	"github.com/offmain/offmain/examples/internal/chatstate.",
}

// aboutState reports whether line, a stall report as the log writes it,
// names a file in the state folder dir (drafts.json, anchors.json,
// transcripts/, their temp files; not composer.log, which the log itself
// writes from stall's goroutine) or has a frame in statePkgs in its stack.
func aboutState(line, dir string) bool {
	if strings.Contains(line, dir+string(filepath.Separator)) {
		return true
	}
	for _, p := range statePkgs {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// stallSession runs the app with stall on under agent load, as
// TestStallNamesNoStateFile says, and returns the stall reports it logged,
// one line each.
func stallSession(t *testing.T, state, env string, args []string) []string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	srv, err := tmux.Start(t.TempDir(), 100, 30,
		[]string{appEnv + "=1", stallEnv + "=" + env, "OFFMAIN_QOS=utility", "TMPDIR=" + t.TempDir()},
		append([]string{exe, "-dir", state, "-chats", "general,build", "-agents"}, args...))
	if errors.Is(err, tmux.ErrNotInstalled) {
		t.Skip("tmux is not installed: this test needs a real terminal to type into (.ci/run installs tmux)")
	}
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wait := func(text string) {
		t.Helper()
		_, err := srv.WaitScreen(ctx, text, 20*time.Millisecond)
		require.NoError(t, err)
	}
	wait("2 agents:")
	wait("up 3s") // the general chat's agent has loaded the machine for 3 s
	for _, k := range "stall watch" {
		require.NoError(t, srv.SendText(string(k)))
	}
	require.NoError(t, srv.SendKeys("Tab")) // to build
	for _, k := range "other chat" {
		require.NoError(t, srv.SendText(string(k)))
	}
	wait("┃ other chat")
	require.NoError(t, srv.SendKeys("BTab")) // back to general
	wait("┃ stall watch")
	require.NoError(t, srv.SendKeys("PPage", "PPage", "NPage")) // the agents' lines scroll
	require.NoError(t, srv.SendKeys("Enter"))                   // to the transcript, and the agent
	for _, k := range " more" {
		require.NoError(t, srv.SendText(string(k)))
	}
	wait("┃  more")
	require.NoError(t, srv.SendKeys("C-c"))
	status, screen, err := srv.WaitExit(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, status, "exit status; the screen:\n%s", screen)

	b, err := os.ReadFile(filepath.Join(state, stallLog))
	require.NoError(t, err, "stall's log")
	var reports []string
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "stall") {
			reports = append(reports, strings.TrimSpace(line))
			t.Log(strings.TrimSpace(line))
		}
	}
	return reports
}
