package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStallNamesNoStateFile runs the app under Xvfb with OFFMAIN_STALL=1
// and every chat's agent busy (a spinner per CPU and 1 MiB writes with an
// fsync every 8 MiB, each): types and sends, switches to another chat and
// pastes there, switches back, scrolls the transcript with the wheel,
// closes the window, and reads stall's reports on the app's stderr: none
// may concern the app's state (see aboutState). With -sync-saves, which
// writes every draft on the UI goroutine, and a budget of 1 ms, so that
// every such write is over it, the reports do: the check can fail.
func TestStallNamesNoStateFile(t *testing.T) {
	requireTools(t, "Xvfb", "xdotool", "xclip")
	for _, tc := range []struct {
		name      string
		env       string // OFFMAIN_STALL
		args      []string
		wantState bool // reports about the state: want some (true) or none
	}{
		{"offmain", "1", nil, false},
		{"sync saves", "budget=1ms", []string{"-sync-saves"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OFFMAIN_STALL", tc.env) // the app is this binary re-executed: it inherits it
			dir := t.TempDir()
			seedTranscript(t, dir, "general", 120)
			t.Setenv("TMPDIR", t.TempDir()) // the agents' scratch files
			display := startX(t)
			r := startApp(t, display, dir, append([]string{"-agents"}, tc.args...)...)
			waitFile(t, filepath.Join(dir, "transcripts", "general.json"), "up 3s") // its agent has loaded the machine for 3 s
			xdo(t, display, "type", "--delay", "20", "hello stall")
			xdo(t, display, "key", "Return")
			xdo(t, display, "type", "--delay", "20", "watch this")
			xdo(t, display, "key", "ctrl+shift+Tab") // to review, the last chat
			paste(t, display, "pasted under load")
			xdo(t, display, "key", "ctrl+Tab") // back to general
			waitFile(t, filepath.Join(dir, draftsFile), "pasted under load")
			waitFile(t, filepath.Join(dir, draftsFile), "watch this")
			xdo(t, display, "mousemove", "450", "250", "click", "--repeat", "6", "4") // wheel up
			waitFile(t, filepath.Join(dir, "anchors.json"), `"chat":"general"`)
			closeWindow(t, display)
			requireStatus(t, r, 0)
			assert.Contains(t, r.stderr.String(), "flush: saved", "the flush hook's report")

			var reports, named []string
			for line := range strings.Lines(r.stderr.String()) {
				if !strings.Contains(line, "stall") {
					continue
				}
				line = strings.TrimSpace(line)
				t.Log(line)
				reports = append(reports, line)
				if aboutState(line, dir) {
					named = append(named, line)
				}
			}
			if tc.wantState {
				assert.NotEmpty(t, named, "with saves on the UI goroutine: got no report about the state in %s, want some; all reports:\n%s", dir, strings.Join(reports, "\n"))
			} else {
				assert.Empty(t, named, "reports about the state in %s: got these, want none", dir)
			}
		})
	}
}

// statePkgs are the packages that read and write the app's state: a wait
// of the UI goroutine inside them is a wait for the state, whether or not
// stall could name the file (it names it only when its sampler saw the
// call).
var statePkgs = []string{
	"github.com/offmain/offmain/statefile.", "github.com/offmain/offmain/drafts.",
	"github.com/offmain/offmain/anchors.", "github.com/offmain/offmain/flush.",
	"github.com/offmain/offmain/examples/internal/chatstate.",
}

// aboutState reports whether line, a stall report as slog writes it,
// names a file in the state folder dir (drafts.json, anchors.json,
// transcripts/, their temp files) or has a frame in statePkgs in its
// stack.
func aboutState(line, dir string) bool {
	if strings.Contains(line, dir+string(filepath.Separator)) {
		return true
	}
	for _, p := range statePkgs {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}
