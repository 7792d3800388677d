package main

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/examples/internal/chatstate"
)

var modes = []struct {
	name string
	sync bool
}{{"offmain", false}, {"sync-saves", true}}

func TestTypingReachesDraftStore(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			h := newHarness(t, testConfig(dir, mode.sync))
			h.typeText("hi there")
			assert.Equal(t, "hi there", h.a.state.Saves.Draft("general"), "draft in the store after typing")
			if mode.sync {
				// Saved on the UI loop: on disk before the key's Update returned.
				assert.Equal(t, map[string]string{"general": "hi there"}, rawDrafts(t, dir))
			} else {
				assert.Equal(t, "offmain saves", h.a.state.Saves.Name(), "drafts.Store got every keystroke")
			}
			rep := h.quit()
			assert.True(t, rep.Saved, "flush report: %v", rep)
			assert.Equal(t, map[string]string{"general": "hi there"}, diskDrafts(t, dir), "drafts on disk after quit")
		})
	}
}

func TestSendClearsDraftAndAddsToTranscript(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, testConfig(dir, false))
	h.typeText("ship it")
	assert.Nil(t, h.key("enter"), "no agent: nothing to write to")
	c := h.m.chat("general")
	assert.Empty(t, c.input.Value())
	assert.Empty(t, h.a.state.Saves.Draft("general"), "sending deletes the draft")
	require.NotEmpty(t, c.items)
	last := c.items[len(c.items)-1]
	assert.Equal(t, chatstate.Item{ID: last.ID, From: "you", Text: "ship it", At: last.At}, last)
	h.quit()
	assert.Empty(t, diskDrafts(t, dir))
}

func TestRestartRestoresDraftsAndScrollPlaces(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, again bool // sync saves in the first run, in the restart
	}{
		{"offmain", false, false},
		{"sync-saves", true, true},
		{"sync-saves then offmain", true, false},
		{"offmain then sync-saves", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h := newHarness(t, testConfig(dir, tc.first))
			h.fill("general", 200)
			h.typeText("draft one")
			h.key("tab")
			h.fill("build", 50)
			h.typeText("draft two")
			h.key("shift+tab")
			require.NotNil(t, h.key("pgup"), "scrolling asks for a settle message")
			h.key("pgup")
			c := h.m.chat("general")
			require.True(t, c.hasPlace)
			wantY, wantPlace := c.vp.YOffset, c.place
			require.Greater(t, wantY, 0)
			require.False(t, c.vp.AtBottom())
			h.m.Update(scrollSettledMsg{chat: "general", gen: c.scrollGen})
			got, ok := h.a.state.Saves.Anchor("general")
			require.True(t, ok, "the settled scroll reached the anchors store")
			assert.Equal(t, wantPlace.Item, got.Item)
			assert.Equal(t, wantPlace.Offset, got.Offset)
			rep := h.quit()
			require.True(t, rep.Saved, "flush report: %v", rep)

			h2 := newHarness(t, testConfig(dir, tc.again))
			c2, b2 := h2.m.chat("general"), h2.m.chat("build")
			assert.Equal(t, "draft one", c2.input.Value())
			assert.Equal(t, "draft two", b2.input.Value())
			assert.Len(t, c2.items, 200, "transcript restored")
			assert.Equal(t, wantY, c2.vp.YOffset, "scroll place restored")
			assert.Equal(t, wantPlace.Item, c2.place.Item)
			assert.True(t, b2.vp.AtBottom(), "a chat never scrolled follows its newest line")
			assert.Contains(t, h2.m.View(), "draft one")
		})
	}
}

func TestScrollSavesOnlyOnceSettled(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.fill("general", 200)
	h.key("pgup")
	c := h.m.chat("general")
	first := c.scrollGen
	h.key("pgup")
	h.m.Update(scrollSettledMsg{chat: "general", gen: first})
	_, ok := h.a.state.Saves.Anchor("general")
	assert.False(t, ok, "a settle message of an older scroll saves nothing")
	h.m.Update(scrollSettledMsg{chat: "general", gen: c.scrollGen})
	got, ok := h.a.state.Saves.Anchor("general")
	assert.True(t, ok)
	assert.Equal(t, c.place.Item, got.Item)
}

func TestNewLinesKeepPlaceOrFollow(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.fill("general", 100)
	c := h.m.chat("general")
	assert.True(t, c.vp.AtBottom(), "following: at the bottom")
	h.fill("general", 10)
	assert.True(t, c.vp.AtBottom(), "still following after new lines")
	h.key("pgup")
	place := c.place
	h.fill("general", 10)
	got, _ := c.placeAt(c.vp.YOffset)
	assert.Equal(t, place, got, "scrolled up: new lines do not move the view")
}

func TestQuitKeyQuits(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	cmd := h.key("ctrl+c")
	require.NotNil(t, cmd)
	assert.Equal(t, tea.QuitMsg{}, cmd())
}

func TestQuitRunsHookOverEveryStore(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, testConfig(t.TempDir(), mode.sync))
			h.typeText("x")
			rep := h.quit()
			assert.True(t, rep.Saved, "flush report: %v", rep)
			var names []string
			for _, it := range rep.Items {
				names = append(names, it.Name)
			}
			want := []string{"drafts", "anchors", "transcripts", "agents"}
			if mode.sync {
				want = []string{"transcripts", "agents"} // drafts and anchors are on disk already
			}
			assert.Equal(t, want, names)
			assert.True(t, strings.HasPrefix(rep.String(), "flush: saved"), rep.String())
		})
	}
}

func TestSmallTerminalSaysSo(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.m.Update(tea.WindowSizeMsg{Width: 20, Height: 5})
	assert.Contains(t, h.m.View(), "needs a terminal of at least")
}

func TestMouseWheelScrolls(t *testing.T) {
	h := newHarness(t, testConfig(t.TempDir(), false))
	h.fill("general", 200)
	c := h.m.chat("general")
	bottom := c.vp.YOffset
	_, cmd := h.m.Update(tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelUp})
	assert.NotNil(t, cmd, "a wheel scroll asks for a settle message")
	assert.Less(t, c.vp.YOffset, bottom)
	assert.False(t, c.follow)
	_, cmd = h.m.Update(tea.MouseMsg{Action: tea.MouseActionMotion, Button: tea.MouseButtonNone})
	assert.Nil(t, cmd, "motion does not scroll")
}
