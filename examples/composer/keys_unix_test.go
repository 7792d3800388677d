//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/examples/internal/chatstate"
)

// TestBurstsAndPasteUnderTmux types, into the real binary in a real terminal,
// text holding the name of every bound key, each burst written in one go
// (tmux send-keys -l), then pastes lines (tmux paste-buffer -p, bracketed
// only if the app asked the terminal for it): the draft is the text, in the
// chat it was typed in, and nothing was sent, switched or quit until the
// real ctrl+c.
func TestBurstsAndPasteUnderTmux(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := startUnderTmux(t, t.TempDir(), state, filepath.Join(dir, "probe.csv"))

	bursts := []string{"please enter now ", "then tab word ",
		strings.Join(boundNames(t, newChat("x", chatstate.Transcript{}, "", anchors.Anchor{}, false)), " ")}
	for _, b := range bursts {
		require.NoError(t, srv.SendText(b))
	}
	require.NoError(t, srv.Paste(" pasted enter\nand tab"))
	screen, err := srv.WaitScreen(ctx, "┃ and tab", 20*time.Millisecond)
	require.NoError(t, err, "the paste's second line in the composer")
	assert.NotContains(t, screen, "you: ", "nothing sent")

	require.NoError(t, srv.SendKeys("C-c"))
	status, screen, err := srv.WaitExit(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, status, "screen:\n%s", screen)
	want := strings.Join(bursts, "") + " pasted enter\nand tab"
	assert.Equal(t, map[string]string{"general": want}, diskDrafts(t, state), "drafts on disk")
}
