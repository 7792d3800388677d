package main

import (
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/offmain/offmain/examples/internal/chatstate"
)

// The app's keys are matched by key type, never by a KeyMsg's String(). For
// text (tea.KeyRunes) String() is the text itself, and bubbletea delivers the
// letters that arrive in one terminal read as one KeyRunes message, cut only
// at spaces and control characters (detectOneMsg in bubbletea v1.3.10's
// key.go). A paste without bracketed paste, `tmux send-keys -l`, an IME or a
// fast typist over ssh thus brought the word "enter" as a KeyMsg whose
// String() is "enter", the name of the key that sends.

// action is what one of the app's own keys does.
type action int

const (
	actNone action = iota
	actQuit
	actNextChat
	actPrevChat
	actSend
	actAgent
	actPageUp
	actPageDown
	actLineUp
	actLineDown
)

// appKeys are the app's own keys, by type. tea.KeyEnter is also ctrl+m and
// tea.KeyTab ctrl+i: a terminal sends the same byte for both.
var appKeys = map[tea.KeyType]action{
	tea.KeyCtrlC:     actQuit,
	tea.KeyTab:       actNextChat,
	tea.KeyShiftTab:  actPrevChat,
	tea.KeyEnter:     actSend,
	tea.KeyCtrlG:     actAgent,
	tea.KeyPgUp:      actPageUp,
	tea.KeyPgDown:    actPageDown,
	tea.KeyShiftUp:   actLineUp,
	tea.KeyCtrlUp:    actLineUp,
	tea.KeyShiftDown: actLineDown,
	tea.KeyCtrlDown:  actLineDown,
}

// appKey returns the app's action for msg, or actNone for a key that edits
// the composer: text, and any key with alt (alt+enter is a new line).
func appKey(msg tea.KeyMsg) action {
	if msg.Alt || msg.Type == tea.KeyRunes {
		return actNone
	}
	return appKeys[msg.Type]
}

// key handles a key: the app's own keys first, the rest edit the composer.
func (m *model) key(msg tea.KeyMsg) tea.Cmd {
	c := m.chats[m.active]
	if act := appKey(msg); act != actNone {
		return m.do(c, act)
	}
	return m.edit(c, msg)
}

// do runs one of the app's actions on the active chat c.
func (m *model) do(c *chat, act action) tea.Cmd {
	switch act {
	case actQuit:
		return tea.Quit
	case actNextChat:
		return m.switchTo(m.active + 1)
	case actPrevChat:
		return m.switchTo(m.active - 1)
	case actSend:
		return m.send(c)
	case actAgent:
		if m.tiers[c.id] != "" || m.agents.Get(c.id) != nil {
			return m.stopAgent(c.id)
		}
		return m.startAgent(c.id, "")
	case actPageUp:
		return m.scroll(c, func(vp *viewport.Model) { vp.PageUp() })
	case actPageDown:
		return m.scroll(c, func(vp *viewport.Model) { vp.PageDown() })
	case actLineUp:
		return m.scroll(c, func(vp *viewport.Model) { vp.ScrollUp(1) })
	case actLineDown:
		return m.scroll(c, func(vp *viewport.Model) { vp.ScrollDown(1) })
	}
	return nil
}

// edit gives msg to c's composer and its text to the draft store.
func (m *model) edit(c *chat, msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyRunes && !msg.Alt {
		// Text, however it arrived. The text area matches its own keys
		// (left, home, delete, alt+enter...) with key.Matches, which compares
		// String(); a paste's String() is bracketed, "[text]", so that no
		// binding matches it (Key.String in bubbletea v1.3.10's key.go).
		// Alt with runes is a real key (alt+f): bubbletea takes one rune
		// after an escape.
		msg.Paste = true
	}
	var cmd tea.Cmd
	c.input, cmd = c.input.Update(msg)
	err := m.saves.SetDraft(c.id, c.input.Value())
	m.probe.saveReturned()
	if err != nil {
		m.notes.set(chatstate.Note("draft not saved", err))
	}
	return cmd
}
