package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/chatstate"
	"github.com/offmain/offmain/qos"
)

// scrollSettle is how long scrolling must pause before the place is saved:
// a settled scroll, not every wheel notch.
const scrollSettle = 150 * time.Millisecond

// scrollSettledMsg arrives scrollSettle after a scroll.
type scrollSettledMsg struct {
	chat string
	gen  int
}

// sentMsg reports the write of a sent message to the chat's agent.
type sentMsg struct {
	chat string
	err  error
}

// model is the app's bubbletea model: the chats list, and the active chat's
// transcript and composer. All of it lives on bubbletea's event loop, the
// app's UI loop.
type model struct {
	chats  []*chat
	active int
	saves  chatstate.Saver
	trans  *chatstate.Transcripts
	agents *agent.Set
	probe  *probeRef
	mode   qos.Mode
	notes  *noteBox

	startAgents   bool              // start every chat's agent in Init
	tiers         map[string]string // chat -> applied tier of its running agent
	width, height int
}

// Init turns on bracketed paste, focuses the active composer and starts the
// agents asked for. bubbletea v1 turns bracketed paste on at start already
// (Program.Run in its tea.go); asking here keeps it on whatever the program's
// options say. With it the terminal marks a paste (ESC [200~ ... ESC [201~,
// "Bracketed Paste Mode" in xterm's ctlseqs), so a newline in pasted text
// is text, not the enter that sends.
func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.EnableBracketedPaste, m.chats[m.active].input.Focus()}
	if m.startAgents {
		for _, c := range m.chats {
			cmds = append(cmds, m.startAgent(c.id, ""))
		}
	}
	return tea.Batch(cmds...)
}

// Update handles one message on the UI loop.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		m.probe.updateEntered(msg)
		return m, m.key(msg)
	case tea.MouseMsg:
		m.probe.inputEvent()
		return m, m.mouse(msg)
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case scrollSettledMsg:
		m.settled(msg)
	case agent.Started:
		m.agentStarted(msg)
	case agent.Output:
		if c := m.chat(msg.Chat); c != nil {
			for _, l := range msg.Lines {
				c.add("agent", l)
			}
			m.saveTranscript(c)
		}
	case agent.Exited:
		m.agentExited(msg)
	case sentMsg:
		if msg.err != nil {
			m.notes.set(fmt.Sprintf("%s: agent input: %v", msg.chat, msg.err))
		}
	default: // the cursor's blink
		var cmd tea.Cmd
		c := m.chats[m.active]
		c.input, cmd = c.input.Update(msg)
		return m, cmd
	}
	return m, nil
}

// mouse scrolls the transcript with the wheel.
func (m *model) mouse(msg tea.MouseMsg) tea.Cmd {
	if msg.Action != tea.MouseActionPress || (msg.Button != tea.MouseButtonWheelUp && msg.Button != tea.MouseButtonWheelDown) {
		return nil
	}
	c := m.chats[m.active]
	return m.scroll(c, func(vp *viewport.Model) { *vp, _ = vp.Update(msg) })
}

// scroll moves c's view and asks for a settle message.
func (m *model) scroll(c *chat, move func(*viewport.Model)) tea.Cmd {
	before := c.vp.YOffset
	move(&c.vp)
	if !c.scrolled(before) {
		return nil
	}
	id, gen := c.id, c.scrollGen
	return tea.Tick(scrollSettle, func(time.Time) tea.Msg { return scrollSettledMsg{chat: id, gen: gen} })
}

// settled saves the place of a scroll that has settled.
func (m *model) settled(msg scrollSettledMsg) {
	c := m.chat(msg.chat)
	if c == nil || msg.gen != c.scrollGen || !c.hasPlace {
		return
	}
	if err := m.saves.SetAnchor(c.id, c.place); err != nil {
		m.notes.set(chatstate.Note("scroll place not saved", err))
	}
}

func (m *model) switchTo(i int) tea.Cmd {
	n := len(m.chats)
	m.chats[m.active].input.Blur()
	m.active = ((i % n) + n) % n
	return m.chats[m.active].input.Focus()
}

// send posts the composer's text to the transcript (and to the chat's
// agent), or runs a /agent or /stop command, and clears the draft.
func (m *model) send(c *chat) tea.Cmd {
	text := strings.TrimSpace(c.input.Value())
	if text == "" {
		return nil
	}
	c.input.Reset()
	if err := m.saves.SetDraft(c.id, ""); err != nil {
		m.notes.set(chatstate.Note("draft not saved", err))
	}
	m.probe.saveReturned()
	switch {
	case text == "/stop":
		return m.stopAgent(c.id)
	case text == "/agent" || strings.HasPrefix(text, "/agent "):
		return m.startAgent(c.id, strings.TrimSpace(strings.TrimPrefix(text, "/agent")))
	}
	c.follow = true
	c.add("you", text)
	m.saveTranscript(c)
	a := m.agents.Get(c.id)
	if a == nil {
		return nil
	}
	id := c.id
	return func() tea.Msg { return sentMsg{chat: id, err: a.Write(text)} }
}

func (m *model) chat(id string) *chat {
	for _, c := range m.chats {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (m *model) saveTranscript(c *chat) {
	if err := m.trans.Save(c.id, c.next, c.items); err != nil {
		m.notes.set(chatstate.Note("transcript not saved", err))
	}
}
