//go:build unix

package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuitRestoresTerminal quits the app under tmux as a session ends it:
// SIGTERM (a service manager, kill), SIGTERM and at once SIGHUP (a logout:
// systemd-logind's session scopes have SendSIGHUP=yes), and the window
// closed. The draft typed just before is on disk each time, and where the
// terminal outlives the app, the app left it as it found it: the normal
// screen, not the alternate one, in cooked mode (icanon and echo on), with
// the hook's report written below, not across the chat list. Before the
// program became a stopper of the hook, Notify's exit raced bubbletea's own
// quit, and the terminal stayed in raw mode on the alternate screen.
func TestQuitRestoresTerminal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quit   func(t *testing.T, pid int)
		status int // 0: the window is gone with the status
	}{
		{"SIGTERM", func(t *testing.T, pid int) { require.NoError(t, syscall.Kill(pid, syscall.SIGTERM)) }, 143},
		{"SIGTERM then SIGHUP", func(t *testing.T, pid int) {
			require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
			require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
		}, 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			srv := startUnderTmux(t, t.TempDir(), state, filepath.Join(t.TempDir(), "probe.csv"))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, srv.SendText("bye now"))
			_, err := srv.WaitScreen(ctx, "┃ bye now", 20*time.Millisecond)
			require.NoError(t, err)
			pid, err := srv.ProgramPID()
			require.NoError(t, err)
			tc.quit(t, pid)
			status, screen, err := srv.WaitExit(ctx)
			require.NoError(t, err)
			// Either signal may come first: both are pending, and the kernel
			// delivers the lower-numbered one first (SIGHUP is 1).
			if tc.name == "SIGTERM then SIGHUP" && status == 129 {
				status = 143
			}
			assert.Equal(t, tc.status, status, "exit status; screen:\n%s", screen)
			alt, err := srv.AlternateScreen()
			require.NoError(t, err)
			assert.False(t, alt, "the app left the terminal on the alternate screen:\n%s", screen)
			modes, err := srv.TerminalModes()
			require.NoError(t, err)
			assert.True(t, cooked(modes), "the app left the terminal in raw mode: %s", modes)
			assert.Regexp(t, regexp.MustCompile(`(?m)^flush: (terminated|hangup): saved 3/3, stopped 2/2 in `), screen,
				"the report on a line of its own, in the normal screen")
			assert.NotContains(t, screen, helpLine, "the chat list's help line is gone with the alternate screen")
			assert.Equal(t, map[string]string{"general": "bye now"}, diskDrafts(t, state))
		})
	}
	t.Run("window closed", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		srv := startUnderTmux(t, t.TempDir(), state, filepath.Join(t.TempDir(), "probe.csv"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, srv.SendText("closing"))
		_, err := srv.WaitScreen(ctx, "┃ closing", 20*time.Millisecond)
		require.NoError(t, err)
		pid, err := srv.ProgramPID()
		require.NoError(t, err)
		require.NoError(t, srv.KillWindow())
		require.NoError(t, waitGone(ctx, pid), "the app after its window closed")
		assert.Equal(t, map[string]string{"general": "closing"}, diskDrafts(t, state))
	})
}

// cooked reports whether stty -a's modes are a cooked terminal's:
// canonical input and echo on.
func cooked(modes string) bool {
	f := strings.Fields(modes)
	has := func(m string) bool {
		for _, x := range f {
			if x == m {
				return true
			}
		}
		return false
	}
	return has("icanon") && has("echo")
}

// waitGone waits until process pid no longer exists (kill(2) with signal
// 0 fails with ESRCH), checking on a ticker until ctx ends: the app is no
// child of this process, so there is nothing to wait(2) for.
func waitGone(ctx context.Context, pid int) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
