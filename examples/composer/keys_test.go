package main

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/vt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundNames returns the name of every key the app or its composer binds:
// the app's keys, and each key of each binding in the text area's KeyMap.
func boundNames(t *testing.T, c *chat) []string {
	t.Helper()
	var names []string
	for kt := range appKeys {
		names = append(names, tea.Key{Type: kt}.String())
	}
	km := reflect.ValueOf(c.input.KeyMap)
	for i := range km.NumField() {
		if b, ok := km.Field(i).Interface().(key.Binding); ok {
			names = append(names, b.Keys()...)
		}
	}
	require.Contains(t, names, "enter")
	require.Contains(t, names, "alt+enter", "the composer's new line is bound")
	require.Contains(t, names, "left", "the text area's keys are listed")
	return names
}

// burst sends s as bubbletea's reader delivers letters that arrive in one
// read: each run of non-space runes as one KeyRunes message, each space as
// a KeySpace (detectOneMsg in bubbletea v1.3.10's key.go).
func (h *harness) burst(s string) []tea.Cmd {
	var cmds []tea.Cmd
	for i, word := range strings.Split(s, " ") {
		if i > 0 {
			_, cmd := h.m.Update(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
			cmds = append(cmds, cmd)
		}
		if word != "" {
			_, cmd := h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(word)})
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

func isQuit(cmd tea.Cmd) bool {
	return cmd != nil && reflect.ValueOf(cmd).Pointer() == reflect.ValueOf(tea.Quit).Pointer()
}

// assertNothingFired checks that the model is where newHarness and fill left
// it, but for the composer's text.
func assertNothingFired(t *testing.T, h *harness, bottom int, cmds []tea.Cmd) {
	t.Helper()
	assert.Equal(t, 0, h.m.active, "active chat: got %d, want 0 (general)", h.m.active)
	c := h.m.chat("general")
	assert.Len(t, c.items, 200, "transcript items: nothing sent")
	assert.Equal(t, bottom, c.vp.YOffset, "transcript not scrolled")
	assert.Nil(t, h.m.agents.Get("general"), "no agent started")
	assert.Empty(t, h.m.tiers)
	for _, cmd := range cmds {
		assert.False(t, isQuit(cmd), "a key quit the app")
	}
}

// TestBurstOfKeyNamesIsText types and pastes text holding the name of every
// bound key: the text arrives intact and no key fires.
func TestBurstOfKeyNamesIsText(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.fill("general", 200)
	c := h.m.chat("general")
	bottom := c.vp.YOffset
	for _, name := range boundNames(t, c) {
		text := "please " + name + " now"
		for _, tc := range []struct {
			how  string
			send func() []tea.Cmd
		}{
			{"as the reader cuts it", func() []tea.Cmd { return h.burst(text) }},
			{"one KeyRunes", func() []tea.Cmd {
				msg := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(text)}
				assert.Equal(t, actNone, appKey(msg))
				_, cmd := h.m.Update(msg)
				return []tea.Cmd{cmd}
			}},
			{"pasted", func() []tea.Cmd {
				_, cmd := h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Paste: true, Runes: []rune(text)})
				return []tea.Cmd{cmd}
			}},
		} {
			c.input.Reset()
			cmds := tc.send()
			assert.Equal(t, text, c.input.Value(), "composer after %q %s: got %q, want %q", text, tc.how, c.input.Value(), text)
			assert.Equal(t, text, h.a.state.Saves.Draft("general"), "draft after %q %s", text, tc.how)
			assertNothingFired(t, h, bottom, cmds)
		}
	}
}

// TestPasteKeepsNewlines pastes lines: a newline in a paste is a new line
// in the composer (a terminal sends CR for it), not the enter that sends.
func TestPasteKeepsNewlines(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.fill("general", 200)
	c := h.m.chat("general")
	bottom := c.vp.YOffset
	_, cmd := h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Paste: true, Runes: []rune("first enter\rsecond tab\nthird")})
	want := "first enter\nsecond tab\nthird"
	assert.Equal(t, want, c.input.Value())
	assert.Equal(t, want, h.a.state.Saves.Draft("general"))
	assertNothingFired(t, h, bottom, []tea.Cmd{cmd})
}

// TestKeysStillWorkByType checks the keys that must still fire: the app's
// (tab, enter...: the harness sends them by type) and the composer's, with
// alt too.
func TestKeysStillWorkByType(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	c := h.m.chat("general")
	h.burst("one two")
	h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Alt: true, Runes: []rune("b")}) // word backward
	h.typeText("X")
	h.m.Update(tea.KeyMsg{Type: tea.KeyLeft})
	h.typeText("Y")
	h.m.Update(tea.KeyMsg{Type: tea.KeyEnter, Alt: true}) // new line
	h.m.Update(tea.KeyMsg{Type: tea.KeyCtrlJ})            // new line
	assert.Equal(t, "one Y\n\nXtwo", c.input.Value())
	assert.True(t, isQuit(h.key("ctrl+c")), "ctrl+c quits")
	h.key("tab")
	assert.Equal(t, 1, h.m.active, "tab: next chat")
	h.key("shift+tab")
	assert.Equal(t, 0, h.m.active, "shift+tab: previous chat")
	h.key("enter")
	require.NotEmpty(t, c.items)
	assert.Equal(t, "one Y\n\nXtwo", c.items[len(c.items)-1].Text, "enter sends")
	assert.Empty(t, c.input.Value())
}

// TestInitTurnsOnBracketedPaste checks that Init asks for bracketed paste.
func TestInitTurnsOnBracketedPaste(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	batch, ok := h.m.Init()().(tea.BatchMsg)
	require.True(t, ok, "Init returns a batch")
	var found bool
	for _, cmd := range batch {
		found = found || reflect.ValueOf(cmd).Pointer() == reflect.ValueOf(tea.EnableBracketedPaste).Pointer()
	}
	assert.True(t, found, "tea.EnableBracketedPaste in Init's batch")
}

// lockedBuffer is a bytes.Buffer safe for the renderer's goroutine.
type lockedBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgramBurstAndPaste runs the real bubbletea program, its reader
// parsing the bytes: a burst holding every bound key's name, written at
// once, and a bracketed paste with a newline reach the draft intact; the
// program asked the terminal for bracketed paste; only the real ctrl+c
// quits.
func TestProgramBurstAndPaste(t *testing.T) {
	dir := t.TempDir()
	a, err := openApp(testConfig(dir, false), nil)
	require.NoError(t, err)
	// Read the bindings before the program runs: its Update writes the
	// text area, KeyMap included, on the program's goroutine.
	burst := "please " + strings.Join(boundNames(t, a.model.chat("general")), " then ") + " now"
	var out lockedBuffer
	keys, typing := io.Pipe()
	defer typing.Close() // ends bubbletea's input reader
	p := a.program(keys, io.MultiWriter(vt.NewSafeEmulator(100, 30), &out))
	ran := make(chan error, 1)
	go func() {
		_, err := p.Run()
		ran <- err
	}()
	p.Send(tea.WindowSizeMsg{Width: 100, Height: 30})

	paste := "\x1b[200~pasted enter\rand tab\x1b[201~"
	wrote := make(chan error, 1)
	go func() { // ends when all is read, or when the deferred Close ends the pipe
		var err error
		for _, b := range []string{burst, paste, "\x03"} { // ctrl+c last
			if _, err = typing.Write([]byte(b)); err != nil {
				break
			}
		}
		wrote <- err
	}()
	require.NoError(t, recv(t, ran, "end of the program"))
	typing.Close()
	assert.NoError(t, recv(t, wrote, "end of the writes"), "the program read all input: only the last byte quit it")
	rep := a.shutdown()
	assert.True(t, rep.Saved, "flush report: %v", rep)
	want := burst + "pasted enter\nand tab"
	assert.Equal(t, map[string]string{"general": want}, diskDrafts(t, dir), "drafts on disk: the text, in the chat it was typed in")
	assert.Equal(t, 0, a.model.active, "no chat switch")
	assert.Empty(t, a.model.chat("general").items, "nothing sent")
	assert.Contains(t, out.String(), "\x1b[?2004h", "bracketed paste turned on (xterm ctlseqs: CSI ? 2004 h)")
}
