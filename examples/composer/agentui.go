package main

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/offmain/offmain/qos"
)

// startAgent returns the command that starts chat's agent off the UI loop.
func (m *model) startAgent(chat, command string) tea.Cmd {
	if c := m.chat(chat); c != nil {
		c.follow = true
		what := "the agent"
		if command != "" {
			what = fmt.Sprintf("agent %q", command)
		}
		c.add("app", fmt.Sprintf("starting %s at the Agent tier, qos mode %s", what, m.mode))
	}
	agents := m.agents
	return func() tea.Msg { return agents.start(chat, command) }
}

// stopAgent returns the command that stops chat's agent off the UI loop; its
// exit arrives as an agentExitedMsg.
func (m *model) stopAgent(chat string) tea.Cmd {
	agents := m.agents
	return func() tea.Msg {
		agents.stop(chat)
		return nil
	}
}

func (m *model) agentStarted(msg agentStartedMsg) {
	c := m.chat(msg.chat)
	if c == nil {
		return
	}
	if msg.err != nil {
		c.add("app", "the agent did not start: "+msg.err.Error())
		return
	}
	if m.agents.get(msg.chat) != nil { // not if it has exited already
		m.tiers[msg.chat] = msg.tier
	}
	c.add("app", fmt.Sprintf("agent pid %d: %s; applied tier: %s", msg.pid, msg.desc, msg.tier))
	m.saveTranscript(c)
}

func (m *model) agentExited(msg agentExitedMsg) {
	delete(m.tiers, msg.chat)
	c := m.chat(msg.chat)
	if c == nil {
		return
	}
	status := "exited"
	if msg.err != nil {
		status = "ended: " + msg.err.Error()
	}
	c.add("app", "agent "+status)
	m.saveTranscript(c)
}

// inspectTier reads back the tier pid runs at, for the status line, once
// the steps qos.Start applies after the child started (SCHED_IDLE, an
// autogroup's nice value) have run, waiting at most a second for them: it
// runs in a tea.Cmd, off the UI goroutine.
func inspectTier(pid int) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = qos.WaitApplied(ctx) // late: show what is applied so far
	a, err := qos.Inspect(pid)
	if err != nil {
		return "tier unknown: " + err.Error()
	}
	return tierText(a)
}

// tierText is an Applied in a few characters: "nice 15 io be/7",
// "SCHED_IDLE io idle".
func tierText(a qos.Applied) string {
	cpu := fmt.Sprintf("nice %d", a.Nice)
	if a.Policy != "" && a.Policy != "SCHED_OTHER" && a.Policy != "default" {
		cpu = a.Policy
	}
	switch a.IOClass {
	case "":
		return cpu
	case "best-effort":
		return fmt.Sprintf("%s io be/%d", cpu, a.IOLevel)
	case "realtime":
		return fmt.Sprintf("%s io rt/%d", cpu, a.IOLevel)
	}
	return cpu + " io " + a.IOClass
}
