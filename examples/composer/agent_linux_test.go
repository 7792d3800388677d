package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/qos"
)

// transcriptHas reports whether c's transcript has an item from from whose
// text contains text.
func transcriptHas(c *chat, from, text string) bool {
	for _, it := range c.items {
		if it.From == from && strings.Contains(it.Text, text) {
			return true
		}
	}
	return false
}

func exited(msg tea.Msg) bool { _, ok := msg.(agentExitedMsg); return ok }

func TestAgentOutputStreamsIn(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	started := h.run(h.m.startAgent("general", "echo hello from the agent; echo second line >&2; printf 'no line end'; exit 3"))
	require.NoError(t, started.(agentStartedMsg).err)
	h.pumpUntil("agent exit", exited)
	c := h.m.chat("general")
	assert.True(t, transcriptHas(c, "agent", "hello from the agent"), "stdout streamed in: %v", c.items)
	assert.True(t, transcriptHas(c, "agent", "second line"), "stderr streamed in: %v", c.items)
	assert.True(t, transcriptHas(c, "agent", "no line end"), "a last line without its end streamed in: %v", c.items)
	assert.True(t, transcriptHas(c, "app", "agent ended: exit status 3"), "exit noted: %v", c.items)
	assert.Contains(t, h.m.View(), "hello from the agent", "on the screen")
	assert.NotContains(t, h.m.status(), "general", "an agent that exited leaves the status line")
}

func TestSentMessageReachesAgent(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.run(h.m.startAgent("general", "cat"))
	h.typeText("ping")
	sent := h.run(h.key("enter"))
	require.NoError(t, sent.(sentMsg).err)
	h.pumpUntil("the echo", func(msg tea.Msg) bool {
		o, ok := msg.(agentOutputMsg)
		return ok && strings.Contains(strings.Join(o.lines, "\n"), "ping")
	})
	assert.True(t, transcriptHas(h.m.chat("general"), "agent", "ping"))
	h.run(h.key("ctrl+g")) // stops it: cat ends when its stdin closes
	h.pumpUntil("agent exit", exited)
	assert.True(t, transcriptHas(h.m.chat("general"), "app", "agent exited"))
}

func TestStatusLineShowsAppliedTier(t *testing.T) {
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
			cfg := testConfig(t.TempDir(), false)
			cfg.mode = tc.mode
			h := newHarness(t, cfg)
			msg := h.run(h.m.startAgent("general", "cat")).(agentStartedMsg)
			require.NoError(t, msg.err)
			applied, err := qos.Inspect(msg.pid)
			require.NoError(t, err)
			assert.Equal(t, tc.want, tierText(applied), "qos.Inspect of the agent: %v", applied)
			want := "1 agents: general " + tc.want
			assert.Contains(t, h.m.status(), want)
			assert.Contains(t, h.m.View(), want, "status line on the screen")
			assert.Contains(t, h.m.View(), "qos "+string(tc.mode))
			h.run(h.key("ctrl+g"))
			h.pumpUntil("agent exit", exited)
			assert.Contains(t, h.m.status(), "no agents")
		})
	}
}

func TestDefaultAgentIsTheStandIn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the stand-in makes its scratch folder
	h := newHarness(t, testConfig(t.TempDir(), false))
	msg := h.run(h.m.startAgent("general", "")).(agentStartedMsg)
	require.NoError(t, msg.err)
	assert.Contains(t, msg.desc, "stand-in")
	h.pumpUntil("the stand-in's first line", func(msg tea.Msg) bool {
		o, ok := msg.(agentOutputMsg)
		return ok && strings.Contains(strings.Join(o.lines, "\n"), "stand-in load started")
	})
	h.run(h.key("ctrl+g"))
	h.pumpUntil("agent exit", exited)
	assert.True(t, transcriptHas(h.m.chat("general"), "app", "agent exited"), "the stand-in ends at EOF on stdin, exit 0: %v", h.m.chat("general").items)
	left, err := filepath.Glob(filepath.Join(tmp, "composer-agent-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the stand-in removed its scratch folder")
}

func TestQuitStopsAgents(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	// sleep does not read its stdin, so closing it is not enough: the
	// agent's group gets SIGTERM.
	msg := h.run(h.m.startAgent("general", "sleep 600")).(agentStartedMsg)
	require.NoError(t, msg.err)
	rep := h.quit()
	assert.True(t, rep.Drained)
	err := syscall.Kill(msg.pid, 0)
	assert.Error(t, err, "the agent's process is gone after quit")
	assert.ErrorContains(t, h.a.agents.start("general", "true").err, "quitting", "no agent starts after quit")
}

// TestAgentDiesWithApp: agents start with SIGKILL as their parent-death
// signal (set by qos.Group, which starts them from a thread that lives while
// they do), so a crash or a SIGKILL of the app does not leave them running;
// qos's TestAgentsDieWhenAppIsKilled kills such an app for real.
func TestAgentDiesWithApp(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	msg := h.run(h.m.startAgent("general", "sleep 600")).(agentStartedMsg)
	require.NoError(t, msg.err)
	a := h.a.agents.get("general")
	require.NotNil(t, a)
	assert.Equal(t, syscall.SIGKILL, a.cmd.SysProcAttr.Pdeathsig, "parent-death signal")
	assert.True(t, a.cmd.SysProcAttr.Setpgid, "a process group of its own, for Stop")
	assert.NoError(t, syscall.Kill(msg.pid, 0), "the agent runs while the app does")
}

// TestQuitStopsAgentStillStarting quits while an agent is between its fork
// and its check for quit, where stopAll cannot see it: stopAll must still not
// return before that agent is gone, or the app exits and leaves it running.
func TestQuitStopsAgentStillStarting(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	s := h.a.agents
	launched := make(chan int, 1)
	launch := s.launch
	s.launch = func(a *agent, mode qos.Mode) (*os.File, error) {
		in, err := launch(a, mode)
		if err == nil {
			launched <- a.cmd.Process.Pid
		}
		<-s.quit // hold the start until quitting has begun
		return in, err
	}
	started := make(chan agentStartedMsg, 1)
	go func() { started <- s.start("general", "sleep 600") }()
	pid := recv(t, launched, "the agent's fork")
	s.stopAll()
	assert.Error(t, syscall.Kill(pid, 0), "the agent's process is gone when stopAll returns")
	msg := recv(t, started, "the start's return")
	assert.ErrorIs(t, msg.err, errAgentsClosed)
}

// TestAgentExitsWhileEscapedChildHoldsOutput runs an agent that leaves a
// process of another session holding its output (a daemon it started): the
// agent has exited, so its exit must reach the UI, not wait for that process
// to close the pipe, which a stop's signals to the agent's group never reach.
func TestAgentExitsWhileEscapedChildHoldsOutput(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	msg := h.run(h.m.startAgent("general", "setsid sleep 60 & echo escaped $!")).(agentStartedMsg)
	require.NoError(t, msg.err)
	var escaped int
	h.pumpUntil("the escaped child's pid", func(msg tea.Msg) bool {
		o, ok := msg.(agentOutputMsg)
		if ok && len(o.lines) > 0 {
			_, err := fmt.Sscanf(o.lines[0], "escaped %d", &escaped)
			return err == nil
		}
		return false
	})
	t.Cleanup(func() { _ = syscall.Kill(escaped, syscall.SIGKILL) })
	h.pumpUntil("agent exit", exited)
	assert.NotContains(t, h.m.status(), "general", "an agent that exited leaves the status line")
}
