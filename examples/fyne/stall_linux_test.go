package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/examples/internal/xwin"
)

// agentEnv, set to 1, makes the test binary run as the examples' agent
// stand-in (agent.StandIn): a spinner per CPU and 1 MiB writes with an
// fsync every 8 MiB, until its stdin ends.
const agentEnv = "OFFMAIN_FYNE_AGENT"

// TestStallNamesNoStateFile runs the app under Xvfb with OFFMAIN_STALL=1
// beside two agent stand-ins (the app starts no agents of its own, so the
// test does, untiered): types lines until the text box scrolls, turns the
// wheel over it, types more, closes the window, and reads stall's reports
// on the app's stderr: none may concern the app's state (see aboutState).
// With a budget of 1 µs stall reports the UI goroutine's short waits too
// (Fyne's own, as it starts watching its settings folder, or waits for its
// lifecycle's events): the reports do reach the test, from Fyne's
// goroutine.
func TestStallNamesNoStateFile(t *testing.T) {
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(e2eEnv) == "1" {
				t.Fatalf("%s is not installed, and %s=1 asks for this test", tool, e2eEnv)
			}
			t.Skipf("needs xvfb and xdotool (.ci/fyne installs them): %v", err)
		}
	}
	x, err := xwin.StartXvfb("-ardelay", "100000", "-noreset")
	require.NoError(t, err)
	t.Cleanup(x.Stop)
	t.Setenv("TMPDIR", t.TempDir()) // the agents' scratch files
	startAgents(t, 2)

	for _, tc := range []struct {
		name, env string // OFFMAIN_STALL
		wantFyne  bool   // want a report from Fyne's goroutine, and no check of the state
	}{
		{"frame budget", "1", false},
		{"1µs budget", "budget=1us", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OFFMAIN_STALL", tc.env) // the app is this binary re-executed: it inherits it
			a := startApp(t, x.Display, "-settle", "50ms")
			for i := range 12 {
				a.typeText("line " + strings.Repeat("x", i))
				a.newline()
			}
			a.xdo("mousemove", "240", "160", "click", "--repeat", "6", "4") // wheel up
			a.xdo("click", "--repeat", "3", "5")                            // and down
			a.typeText("last")
			a.closeWindow()
			a.waitLine("hold: flush 1")
			a.release()
			a.requireExit(0)

			var reports, about, fyne []string
			for _, l := range strings.Split(a.stderr(), "\n") {
				if !strings.Contains(l, "stall") {
					continue
				}
				reports = append(reports, l)
				if aboutState(l, a.dir) {
					about = append(about, l)
				}
				if strings.Contains(l, "fyne.io/fyne/v2/") {
					fyne = append(fyne, l)
				}
			}
			t.Logf("%d stall reports:\n%s", len(reports), strings.Join(reports, "\n"))
			if tc.wantFyne {
				// Not the check of the state: at 1 µs drafts.Store.Set
				// is seen waiting for its lock, held while a save
				// copies the drafts in memory, not across the disk.
				assert.NotEmpty(t, fyne, "got no report with Fyne in its stack, want some")
				return
			}
			assert.Empty(t, about, "reports about the state in %s: got these, want none", a.dir)
		})
	}
}

// newline presses Return and waits until the text box holds a new line.
func (a *fyneApp) newline() {
	a.t.Helper()
	want := a.lastText() + "\n"
	a.xdo("key", "Return")
	a.waitLine("text: " + strconv.Quote(want))
}

// startAgents starts n agent stand-ins (this binary, with agentEnv) and
// stops them at cleanup by closing their stdin.
func startAgents(t *testing.T, n int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	for range n {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), agentEnv+"=1")
		in, err := cmd.StdinPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = in.Close()
			assert.NoError(t, cmd.Wait(), "agent stand-in")
		})
	}
}

// statePkgs are the packages that read and write the app's state: a wait
// of the UI goroutine inside them is a wait for the state, whether or not
// stall could name the file (it names it only when its sampler saw the
// call).
var statePkgs = []string{
	"github.com/offmain/offmain/statefile.", "github.com/offmain/offmain/drafts.",
	"github.com/offmain/offmain/flush.",
}

// aboutState reports whether line, a stall report as the log writes it,
// names a file in the state folder dir (drafts.json, its temp files) or
// has a frame in statePkgs in its stack.
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
