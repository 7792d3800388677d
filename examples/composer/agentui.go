package main

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/config"
)

// workerEnv, set to 1, makes the composer binary run as the built-in agent
// (agent.StandIn) instead of the app: how the default agent re-executes the
// app; the tests' binary honours it too.
const workerEnv = "OFFMAIN_COMPOSER_AGENT"

// newAgentSet returns the composer's agents: messages go to send, the
// stand-in is this binary under workerEnv, and lines lose what the terminal
// would take as control sequences (ansi.Strip).
func newAgentSet(cfg config.Config, send func(tea.Msg)) *agent.Set {
	return agent.New(agent.Options{
		Mode:       cfg.Mode,
		Command:    cfg.AgentCmd,
		Send:       func(msg any) { send(msg) },
		StandInEnv: workerEnv,
		HideEnv:    []string{config.ProbeEnv},
		Clean:      func(line string) string { return strings.ReplaceAll(ansi.Strip(line), "\r", "") },
	})
}

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
	return func() tea.Msg { return agents.Start(chat, command) }
}

// stopAgent returns the command that stops chat's agent off the UI loop; its
// exit arrives as an agent.Exited.
func (m *model) stopAgent(chat string) tea.Cmd {
	agents := m.agents
	return func() tea.Msg {
		agents.Stop(chat)
		return nil
	}
}

func (m *model) agentStarted(msg agent.Started) {
	c := m.chat(msg.Chat)
	if c == nil {
		return
	}
	if msg.Err != nil {
		c.add("app", "the agent did not start: "+msg.Err.Error())
		return
	}
	if m.agents.Get(msg.Chat) != nil { // not if it has exited already
		m.tiers[msg.Chat] = msg.Tier
	}
	c.add("app", fmt.Sprintf("agent pid %d: %s; applied tier: %s", msg.PID, msg.Desc, msg.Tier))
	m.saveTranscript(c)
}

func (m *model) agentExited(msg agent.Exited) {
	delete(m.tiers, msg.Chat)
	c := m.chat(msg.Chat)
	if c == nil {
		return
	}
	status := "exited"
	if msg.Err != nil {
		status = "ended: " + msg.Err.Error()
	}
	c.add("app", "agent "+status)
	m.saveTranscript(c)
}
