package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/examples/internal/agent"
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

func exited(msg tea.Msg) bool { _, ok := msg.(agent.Exited); return ok }

func TestAgentOutputStreamsIn(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	started := h.run(h.m.startAgent("general", "echo hello from the agent; echo second line >&2; printf 'no line end'; exit 3"))
	require.NoError(t, started.(agent.Started).Err)
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
		o, ok := msg.(agent.Output)
		return ok && strings.Contains(strings.Join(o.Lines, "\n"), "ping")
	})
	assert.True(t, transcriptHas(h.m.chat("general"), "agent", "ping"))
	h.run(h.key("ctrl+g")) // stops it: cat ends when its stdin closes
	h.pumpUntil("agent exit", exited)
	assert.True(t, transcriptHas(h.m.chat("general"), "app", "agent exited"))
}

// TestStatusLineShowsAppliedTier: the tier agent.Set read back reaches the
// status line (the shared package's TestStartAppliesTier checks the tiers).
func TestStatusLineShowsAppliedTier(t *testing.T) {
	for _, tc := range []struct {
		mode qos.Mode
		want string
	}{
		{qos.ModeUtility, "nice 15 io be/7"},
		{qos.ModeBackground, "SCHED_IDLE io idle"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			cfg := testConfig(t.TempDir(), false)
			cfg.Mode = tc.mode
			h := newHarness(t, cfg)
			msg := h.run(h.m.startAgent("general", "cat")).(agent.Started)
			require.NoError(t, msg.Err)
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
	msg := h.run(h.m.startAgent("general", "")).(agent.Started)
	require.NoError(t, msg.Err)
	assert.Contains(t, msg.Desc, "stand-in")
	h.pumpUntil("the stand-in's first line", func(msg tea.Msg) bool {
		o, ok := msg.(agent.Output)
		return ok && strings.Contains(strings.Join(o.Lines, "\n"), "stand-in load started")
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
	msg := h.run(h.m.startAgent("general", "sleep 600")).(agent.Started)
	require.NoError(t, msg.Err)
	rep := h.quit()
	assert.True(t, rep.Saved)
	err := syscall.Kill(msg.PID, 0)
	assert.Error(t, err, "the agent's process is gone after quit")
	assert.ErrorIs(t, h.a.agents.Start("general", "true").Err, agent.ErrQuitting, "no agent starts after quit")
}
