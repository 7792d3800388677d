package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/config"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/qos"
	"github.com/offmain/offmain/statefile"
)

// harness drives the app's model without a terminal or a bubbletea
// program: the test calls Update itself, and agents' messages arrive on
// msgs instead of the program.
type harness struct {
	t    *testing.T
	a    *app
	m    *model
	msgs chan tea.Msg
	done chan struct{} // closed at quit: agents' late messages are dropped
	rep  *flush.Report
}

// draftsFile is where chatstate keeps the drafts, in both save modes.
const draftsFile = "drafts.json"

func testConfig(dir string, syncSaves bool) config.Config {
	return config.Config{Dir: dir, SyncSaves: syncSaves, Chats: []string{"general", "build"}, Mode: qos.ModeUtility}
}

// newHarness opens the app over cfg, runs Init (which focuses the composer)
// and gives it a 100x30 terminal. The cleanup quits it if the test did not.
func newHarness(t *testing.T, cfg config.Config) *harness {
	t.Helper()
	h := &harness{t: t, msgs: make(chan tea.Msg, 1024), done: make(chan struct{})}
	a, err := openApp(cfg, func(msg tea.Msg) {
		select {
		case h.msgs <- msg:
		case <-h.done:
		}
	})
	require.NoError(t, err)
	h.a, h.m = a, a.model
	t.Cleanup(func() { h.quit() })
	h.m.Init()
	h.m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	return h
}

// quit runs the app's quit path once and returns the flush report.
func (h *harness) quit() flush.Report {
	if h.rep == nil {
		close(h.done)
		rep := h.a.shutdown()
		h.rep = &rep
	}
	return *h.rep
}

var keyTypes = map[string]tea.KeyType{
	"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "enter": tea.KeyEnter, "pgup": tea.KeyPgUp,
	"pgdown": tea.KeyPgDown, "ctrl+c": tea.KeyCtrlC, "ctrl+g": tea.KeyCtrlG,
}

// key sends a named key and returns Update's command.
func (h *harness) key(name string) tea.Cmd {
	h.t.Helper()
	kt, ok := keyTypes[name]
	require.True(h.t, ok, "unknown key %q", name)
	msg := tea.KeyMsg{Type: kt}
	require.Equal(h.t, name, msg.String())
	_, cmd := h.m.Update(msg)
	return cmd
}

// typeText types s one key at a time, as a person does.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// pumpUntil feeds agents' messages to Update until done(msg) holds for one,
// or fails the test after a bound.
func (h *harness) pumpUntil(what string, done func(tea.Msg) bool) {
	h.t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	for {
		select {
		case msg := <-h.msgs:
			h.m.Update(msg)
			if done(msg) {
				return
			}
		case <-timer.C:
			h.t.Fatalf("no %s within 20s", what)
		}
	}
}

// run runs a command the model returned, as bubbletea would, and gives its
// message to Update.
func (h *harness) run(cmd tea.Cmd) tea.Msg {
	h.t.Helper()
	require.NotNil(h.t, cmd)
	msg := cmd()
	if msg != nil {
		h.m.Update(msg)
	}
	return msg
}

// fill adds n agent lines to chat.
func (h *harness) fill(chat string, n int) {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of the agent's output", i)
	}
	h.m.Update(agent.Output{Chat: chat, Lines: lines})
}

// diskDrafts reads the drafts file in dir as a fresh drafts.Store does.
func diskDrafts(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := statefile.NewStore(statefile.Options{})
	defer func() { require.NoError(t, st.Close(context.Background())) }()
	ds, err := drafts.Open(st, filepath.Join(dir, draftsFile), drafts.Options{})
	require.NoError(t, err)
	require.NoError(t, ds.Load(context.Background()))
	defer func() { require.NoError(t, ds.Close(context.Background())) }()
	got := map[string]string{}
	for _, tab := range ds.Tabs() {
		d, _ := ds.Get(tab)
		got[tab] = d.Text
	}
	return got
}

// rawDrafts reads the drafts file with no library in between.
func rawDrafts(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, draftsFile))
	require.NoError(t, err)
	var d struct{ Drafts map[string]drafts.Draft }
	require.NoError(t, json.Unmarshal(b, &d))
	got := map[string]string{}
	for k, v := range d.Drafts {
		got[k] = v.Text
	}
	return got
}
