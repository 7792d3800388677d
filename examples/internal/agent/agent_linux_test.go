package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/qos"
)

// harness is a Set whose messages arrive on msgs, as on an app's UI loop.
type harness struct {
	t    *testing.T
	s    *Set
	msgs chan any
}

// newHarness returns a Set over opts (Send is the harness's). The cleanup
// stops every agent and drops their late messages.
func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, msgs: make(chan any, 1024)}
	done := make(chan struct{})
	opts.Send = func(m any) {
		select {
		case h.msgs <- m:
		case <-done:
		}
	}
	h.s = New(opts)
	t.Cleanup(func() {
		close(done)
		_ = h.s.StopAll(context.Background())
	})
	return h
}

// start starts chat's agent and requires that it started.
func (h *harness) start(chat, command string) Started {
	h.t.Helper()
	msg := h.s.Start(chat, command)
	require.NoError(h.t, msg.Err, "start %q", command)
	return msg
}

// lines collects chat's output until its agent exits, or until stop holds
// for a line, and returns the lines and the exit (zero if stop held first).
func (h *harness) lines(chat string, stop func(line string) bool) ([]string, Exited) {
	h.t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	var lines []string
	for {
		select {
		case m := <-h.msgs:
			switch m := m.(type) {
			case Output:
				if m.Chat != chat {
					continue
				}
				lines = append(lines, m.Lines...)
				if stop != nil && slices.ContainsFunc(m.Lines, stop) {
					return lines, Exited{}
				}
			case Exited:
				if m.Chat == chat {
					return lines, m
				}
			}
		case <-timer.C:
			h.t.Fatalf("chat %s: no exit within 20s; lines so far: %q", chat, lines)
		}
	}
}

func contains(s string) func(string) bool {
	return func(line string) bool { return strings.Contains(line, s) }
}

func TestOutputStreamsIn(t *testing.T) {
	h := newHarness(t, Options{})
	h.start("general", "echo hello from the agent; echo second line >&2; printf 'no line end'; exit 3")
	lines, exit := h.lines("general", nil)
	assert.Equal(t, []string{"hello from the agent", "second line", "no line end"}, lines,
		"stdout, stderr and a last line without its end")
	assert.EqualError(t, exit.Err, "exit status 3")
	assert.Nil(t, h.s.Get("general"), "an agent that exited is gone from the set")
}

func TestWriteReachesAgent(t *testing.T) {
	h := newHarness(t, Options{})
	h.start("general", "cat")
	a := h.s.Get("general")
	require.NotNil(t, a)
	require.NoError(t, a.Write("ping"))
	h.lines("general", contains("ping"))
	h.s.Stop("general") // cat ends when its stdin closes
	_, exit := h.lines("general", nil)
	assert.NoError(t, exit.Err)
}

func TestStartTwice(t *testing.T) {
	h := newHarness(t, Options{})
	h.start("general", "cat")
	assert.ErrorContains(t, h.s.Start("general", "cat").Err, "already runs an agent")
}

func TestStartAppliesTier(t *testing.T) {
	self, err := qos.Inspect(os.Getpid())
	require.NoError(t, err)
	for _, tc := range []struct {
		mode qos.Mode
		want string
	}{
		{qos.ModeUtility, "nice 15 io be/7"},
		{qos.ModeBackground, "SCHED_IDLE io idle"},
		{qos.ModeOff, tierText(self)}, // the child keeps the test's own
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			h := newHarness(t, Options{Mode: tc.mode})
			msg := h.start("general", "cat")
			assert.Equal(t, tc.want, msg.Tier, "the tier Start read back")
			applied, err := qos.Inspect(msg.PID)
			require.NoError(t, err)
			assert.Equal(t, tc.want, tierText(applied), "qos.Inspect of the agent: %v", applied)
		})
	}
}

// TestAgentEnvironment: agents get the mode, not the variables the app
// hides, nor the stand-in's.
func TestAgentEnvironment(t *testing.T) {
	t.Setenv("OFFMAIN_AGENT_TEST_HIDDEN", "x")
	t.Setenv(testStandInEnv, "0")
	h := newHarness(t, Options{Mode: qos.ModeBackground, StandInEnv: testStandInEnv, HideEnv: []string{"OFFMAIN_AGENT_TEST_HIDDEN"}})
	h.start("general", "env")
	lines, _ := h.lines("general", nil)
	assert.Contains(t, lines, qos.EnvVar+"="+string(qos.ModeBackground))
	for _, l := range lines {
		assert.NotContains(t, l, "OFFMAIN_AGENT_TEST_HIDDEN=", "hidden from agents")
		assert.NotContains(t, l, testStandInEnv+"=", "the stand-in's variable is only for the stand-in")
	}
}

func TestDefaultAgentIsTheStandIn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the stand-in makes its scratch folder
	h := newHarness(t, Options{StandInEnv: testStandInEnv})
	msg := h.start("general", "")
	assert.Contains(t, msg.Desc, "stand-in")
	h.lines("general", contains("stand-in load started"))
	h.s.Stop("general")
	_, exit := h.lines("general", nil)
	assert.NoError(t, exit.Err, "the stand-in ends at EOF on stdin, exit 0")
	left, err := filepath.Glob(filepath.Join(tmp, testScratch+"*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the stand-in removed its scratch folder")
}

func TestStopAllStopsAgents(t *testing.T) {
	h := newHarness(t, Options{})
	// sleep does not read its stdin, so closing it is not enough: the
	// agent's group gets SIGTERM.
	msg := h.start("general", "sleep 600")
	_ = h.s.StopAll(context.Background())
	assert.Error(t, syscall.Kill(msg.PID, 0), "the agent's process is gone after StopAll")
	assert.ErrorIs(t, h.s.Start("general", "true").Err, ErrQuitting, "no agent starts after StopAll")
}

// TestAgentDiesWithApp: with qos.Main first in main (this test binary's
// TestMain calls it), the Group starts each agent through two helper
// processes, the app's binary re-executed: the keeper, which is the process
// the app sees (cmd.Process), and below it a child subreaper that kills the
// agent's whole tree once the app is gone, however it ends. qos's
// TestTreeDiesWithApp kills such an app for real (SIGKILL, a panic, a crash
// in C code).
func TestAgentDiesWithApp(t *testing.T) {
	h := newHarness(t, Options{})
	msg := h.start("general", "sleep 600")
	a := h.s.Get("general")
	require.NotNil(t, a)
	assert.True(t, a.cmd.SysProcAttr.Setpgid, "a process group of its own, for Stop")
	assert.NoError(t, syscall.Kill(msg.PID, 0), "the agent runs while the app does")
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", msg.PID))
	require.NoError(t, err)
	assert.Equal(t, "qos-keeper", strings.TrimSpace(string(comm)), "the agent is held by qos's helpers")
}

// TestStopAllStopsAgentStillStarting quits while an agent is between its
// fork and its check for quit, where Stop cannot see it: StopAll must
// still not return before that agent is gone, or the app exits and leaves
// it running.
func TestStopAllStopsAgentStillStarting(t *testing.T) {
	h := newHarness(t, Options{})
	s := h.s
	launched := make(chan int, 1)
	launch := s.launch
	s.launch = func(a *Agent, mode qos.Mode) (*os.File, error) {
		in, err := launch(a, mode)
		if err == nil {
			launched <- a.cmd.Process.Pid
		}
		<-s.quit // hold the start until quitting has begun
		return in, err
	}
	started := make(chan Started, 1)
	go func() { started <- s.Start("general", "sleep 600") }()
	pid := recv(t, launched, "the agent's fork")
	_ = s.StopAll(context.Background())
	assert.Error(t, syscall.Kill(pid, 0), "the agent's process is gone when StopAll returns")
	msg := recv(t, started, "the start's return")
	assert.ErrorIs(t, msg.Err, ErrQuitting)
}

// TestAgentExitsWhileEscapedChildHoldsOutput runs an agent that leaves a
// process of another session holding its output (a daemon it started). That
// process is part of the agent's tree, which the Group holds after the
// agent's own exit: the exit reaches the UI (its output cut off after
// outputDrain), and the quit's StopAll ends the daemon although signals to
// the agent's own process group never reach it.
func TestAgentExitsWhileEscapedChildHoldsOutput(t *testing.T) {
	h := newHarness(t, Options{})
	h.start("general", "setsid sleep 60 & echo escaped $!")
	lines, _ := h.lines("general", contains("escaped"))
	var escaped int
	_, err := fmt.Sscanf(lines[len(lines)-1], "escaped %d", &escaped)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })
	_ = h.s.StopAll(context.Background())
	h.lines("general", nil) // fails the test if the exit does not come
	assert.Error(t, syscall.Kill(escaped, 0), "the daemon the agent left is gone after StopAll")
}

// recv receives from ch, or fails the test after a bound.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s within 20s", what)
		var zero T
		return zero
	}
}
