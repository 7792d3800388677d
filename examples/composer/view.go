package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Layout: the chats list on the left, the active chat on the right (title,
// transcript, a rule, the composer), then the status and help lines.
const (
	listWidth = 18
	minWidth  = listWidth + 30
	minHeight = composerHeight + 8
)

// helpLine is the last line; typebench and the end-to-end test wait for it
// as the sign that the app has drawn its first full frame.
const helpLine = "tab next chat · enter send · pgup/pgdn scroll · ctrl+g agent · ctrl+c quit"

var (
	titleStyle  = lipgloss.NewStyle().Bold(true)
	activeStyle = lipgloss.NewStyle().Bold(true).Reverse(true)
	dimStyle    = lipgloss.NewStyle().Faint(true)
)

// noteBox holds the last problem to show in the status line. It is safe for
// concurrent use: statefile reports failed saves from its writer.
type noteBox struct {
	mu   sync.Mutex // protects note
	note string
}

func (n *noteBox) set(s string) {
	n.mu.Lock()
	n.note = s
	n.mu.Unlock()
}

func (n *noteBox) get() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.note
}

// resize lays every chat out for the new terminal size.
func (m *model) resize(w, h int) {
	m.width, m.height = w, h
	for _, c := range m.chats {
		c.layout(w-listWidth-1, h-2-2-composerHeight)
	}
}

// View renders the screen. The probe's View hop is its return.
func (m *model) View() string {
	s := m.render()
	m.probe.viewRendered()
	return s
}

func (m *model) render() string {
	if m.width < minWidth || m.height < minHeight {
		return fmt.Sprintf("composer needs a terminal of at least %dx%d (this one is %dx%d)", minWidth, minHeight, m.width, m.height)
	}
	bodyH := m.height - 2
	c := m.chats[m.active]
	right := strings.Join([]string{
		titleStyle.Render(ansi.Truncate("# "+c.id, c.width, "…")),
		c.vp.View(),
		dimStyle.Render(strings.Repeat("─", c.width)),
		c.input.View(),
	}, "\n")
	left := lipgloss.NewStyle().Width(listWidth).Height(bodyH).MaxHeight(bodyH).Render(m.list())
	body := lipgloss.JoinHorizontal(lipgloss.Top, left, " ", right)
	return body + "\n" + ansi.Truncate(m.status(), m.width, "…") + "\n" + dimStyle.Render(ansi.Truncate(helpLine, m.width, "…"))
}

// list is the chats list: the active one highlighted, "●" where an agent
// runs, "✎" where a draft waits.
func (m *model) list() string {
	lines := []string{titleStyle.Render("Chats")}
	for i, c := range m.chats {
		mark := " "
		if m.tiers[c.id] != "" {
			mark = "●"
		}
		if strings.TrimSpace(c.input.Value()) != "" {
			mark += "✎"
		}
		name := ansi.Truncate(c.id, listWidth-4, "…")
		line := fmt.Sprintf("%-*s%s", listWidth-3, name, mark)
		if i == m.active {
			line = activeStyle.Render(line)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// status is the status line: how saves are made, the qos mode, each running
// agent's applied tier as qos.Inspect read it back, and the last problem.
func (m *model) status() string {
	parts := []string{m.saves.Name(), "qos " + string(m.mode)}
	var chats []string
	for id := range m.tiers {
		chats = append(chats, id)
	}
	slices.Sort(chats)
	if len(chats) == 0 {
		parts = append(parts, "no agents")
	} else {
		tiers := make([]string, len(chats))
		for i, id := range chats {
			tiers[i] = id + " " + m.tiers[id]
		}
		parts = append(parts, fmt.Sprintf("%d agents: %s", len(chats), strings.Join(tiers, ", ")))
	}
	if n := m.notes.get(); n != "" {
		parts = append(parts, "! "+n)
	}
	return strings.Join(parts, " │ ")
}
