package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/xwin"
)

// appEnv, set to 1, makes the test binary run as the app: Fyne's GLFW
// driver locks the main goroutine to the main thread in an init function,
// and TestMain runs on it.
const appEnv = "OFFMAIN_FYNE_APP"

// e2eEnv, set to 1 (as .ci/fyne does), makes missing X tools a failure
// rather than a skip.
const e2eEnv = "OFFMAIN_FYNE_E2E"

// hangGuard bounds each wait: only there so that a broken run fails with
// what it saw instead of at go test's timeout.
const hangGuard = 90 * time.Second

const title = "offmain fyne"

func TestMain(m *testing.M) {
	if os.Getenv(appEnv) == "1" {
		os.Exit(run())
	}
	if os.Getenv(agentEnv) == "1" {
		os.Exit(agent.StandIn("offmain-fyne-agent-"))
	}
	// Fyne starts its event queue's goroutine when its package initializes
	// (internal/async/chan.go, NewUnboundedChan), and it never ends.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("fyne.io/fyne/v2/internal/async.(*UnboundedChan[...]).processing"))
}

// TestQuits drives the window under Xvfb through each way a desktop
// session ends an app, as the flush package's notes for Fyne say they go.
// The drafts store saves only when flushed (-settle 1h), and a hook item
// holds every flush open until the test releases it, as a slow disk would:
// each text found on disk was written by the quit's flush.
func TestQuits(t *testing.T) {
	for _, tool := range []string{"Xvfb", "xdotool", "import", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(e2eEnv) == "1" {
				t.Fatalf("%s is not installed, and %s=1 asks for this test", tool, e2eEnv)
			}
			t.Skipf("needs xvfb, xdotool, imagemagick and tesseract-ocr (.ci/fyne installs them): %v", err)
		}
	}
	// -ardelay: no autorepeat, a held key types once; -noreset: the server
	// does not reset when its last client (one subtest's app) leaves,
	// which refused the next subtest's connection.
	x, err := xwin.StartXvfb("-ardelay", "100000", "-noreset")
	require.NoError(t, err)
	t.Cleanup(x.Stop)

	// SIGTERM (a service manager, a shutdown): Fyne's handler quits its
	// loop and ShowAndRun returns while Notify's flush runs; the Run after
	// ShowAndRun joins it: one flush, one report, exit 143.
	t.Run("SIGTERM", func(t *testing.T) {
		a := startApp(t, x.Display)
		a.typeText("hello fyne")
		a.signal(syscall.SIGTERM)
		a.waitLine("hold: flush 1")
		a.waitGone()
		a.release()
		a.requireExit(143)
		assert.Equal(t, 1, a.count("hold: flush"), "flushes: one for Fyne's quit and Notify's\n%s", a.stderr())
		assert.Equal(t, 1, a.count("flush: terminated: saved 3/3"), "Notify's report\n%s", a.stderr())
		assert.Equal(t, "hello fyne", a.draft())
	})

	// A logout: SIGTERM and at once SIGHUP (systemd-logind). The second
	// must not cut the flush short. Both may be pending when the app next
	// runs, and the kernel then delivers the lower-numbered first
	// (SIGHUP: kernel/signal.c, next_signal), so either is the first.
	t.Run("SIGTERM then SIGHUP", func(t *testing.T) {
		a := startApp(t, x.Display)
		a.typeText("logging out")
		a.signal(syscall.SIGTERM)
		a.signal(syscall.SIGHUP)
		a.waitLine("signal: hangup")
		a.release()
		a.waitLine(": saved 3/3") // Notify's report, the note on the other signal before it
		first, status := "terminated", 143
		if a.count("flush: terminated while quitting on hangup") > 0 {
			first, status = "hangup", 129
		}
		a.requireExit(status)
		assert.Equal(t, 1, a.count("flush: "+first+": saved 3/3"), "Notify's report\n%s", a.stderr())
		assert.Equal(t, 1, a.count("hold: flush"), "flushes\n%s", a.stderr())
		assert.Equal(t, "logging out", a.draft())
	})

	// Ctrl-C twice: the person asks not to wait for the disk.
	t.Run("SIGINT twice", func(t *testing.T) {
		a := startApp(t, x.Display)
		a.typeText("in a hurry")
		a.signal(syscall.SIGINT)
		a.waitLine("hold: flush 1") // the first has arrived: two pending SIGINTs would be one
		a.signal(syscall.SIGINT)
		a.requireExit(130) // the hold is never released: only the second signal ends it
		assert.Equal(t, 1, a.count("flush: interrupt: second signal, exiting without waiting for the disk"), "%s", a.stderr())
	})

	// Started as a shell's background job (`app &` in a script), which
	// runs with SIGINT ignored (POSIX.1-2017, XCU 2.11, "Signals and Error
	// Handling"): Notify leaves it ignored, but Fyne's own signal.Notify
	// turns it back on (os/signal: Notify re-enables an ignored signal), so
	// SIGINT quits through Fyne alone. A second SIGINT cannot cut the flush
	// short; the Run after ShowAndRun runs it to its end and main returns.
	t.Run("SIGINT twice, started with it ignored", func(t *testing.T) {
		a := startWrapped(t, x.Display, []string{"sh", "-c", `trap '' INT; exec env --default-signal=TERM,HUP "$0" "$@"`})
		a.typeText("in the background")
		a.signal(syscall.SIGINT)
		a.waitLine("hold: flush 1")
		a.waitGone()
		a.signal(syscall.SIGINT)
		a.waitDelivered(syscall.SIGINT) // it reached the app before the flush may end
		a.release()
		a.requireExit(0)
		assert.Equal(t, 0, a.count("second signal"), "%s", a.stderr())
		assert.Equal(t, 1, a.count("flush: saved 3/3"), "main's log of its Run\n%s", a.stderr())
		assert.Equal(t, "in the background", a.draft())
	})

	// SIGHUP alone (the terminal the app was started from closed): Fyne
	// does not catch it, Notify flushes and exits 129, the window on
	// screen meanwhile.
	t.Run("SIGHUP", func(t *testing.T) {
		a := startApp(t, x.Display)
		a.typeText("terminal closed")
		a.signal(syscall.SIGHUP)
		a.waitLine("hold: flush 1")
		_, err := a.x.Find(title)
		require.NoError(t, err, "the window during the flush")
		a.release()
		a.requireExit(129)
		assert.Equal(t, "terminal closed", a.draft())
	})

	// The close button: the intercept flushes while the window stays on
	// screen and takes keys; once the flush drained the window closes and
	// the Run after ShowAndRun saves what was typed during the first.
	t.Run("close button", func(t *testing.T) {
		a := startApp(t, x.Display)
		a.typeText("first")
		a.closeWindow()
		a.waitLine("hold: flush 1")
		a.typeText(" more")
		_, err := a.x.Find(title)
		require.NoError(t, err, "the window during the close's flush")
		a.release()
		a.requireExit(0)
		assert.Equal(t, 2, a.count("hold: flush"), "flushes: the close's and the one after ShowAndRun\n%s", a.stderr())
		assert.Equal(t, "first more", a.draft())
	})

	// A flush that fails at the close: the window stays and says so.
	t.Run("close button, flush fails", func(t *testing.T) {
		a := startApp(t, x.Display, "-flush-deadline", "1s")
		a.typeText("not yet")
		a.closeWindow()
		a.waitLine("hold: flush 1")
		a.waitScreen("Not saved", "Quit anyway")
		_, err := a.x.Find(title)
		require.NoError(t, err, "the window after the failed flush")
		assert.Equal(t, 1, a.count("hold: flush"), "flushes\n%s", a.stderr())
	})
}

// fyneApp is a running copy of the app (this test binary, with appEnv).
type fyneApp struct {
	t       *testing.T
	x       *xwin.Conn
	display string
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{} // closed once cmd.Wait returned

	mu    sync.Mutex // protects lines and seen
	lines []string   // its stderr so far
	seen  chan struct{}
}

// startApp starts the app on display with a fresh state directory, the
// flush held (holdEnv) and every change traced (traceEnv), and waits for
// its window.
func startApp(t *testing.T, display string, args ...string) *fyneApp {
	t.Helper()
	// env --default-signal: the signals at their defaults, as a session
	// starts an app, even under a runner that ignores some (nohup(1), a
	// shell's background job): execve(2) keeps an ignored signal ignored,
	// and Notify rightly leaves it so.
	return startWrapped(t, display, []string{"env", "--default-signal"}, args...)
}

// startWrapped is startApp with the app started through the command wrap.
func startWrapped(t *testing.T, display string, wrap []string, args ...string) *fyneApp {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	a := &fyneApp{t: t, display: display, dir: t.TempDir(), exited: make(chan struct{}), seen: make(chan struct{}, 1)}
	argv := append(append(append([]string(nil), wrap...), exe, "-dir", a.dir, "-settle", "1h"), args...)
	a.cmd = exec.Command(argv[0], argv[1:]...)
	a.cmd.Env = append(os.Environ(), appEnv+"=1", "DISPLAY="+display, holdEnv+"="+filepath.Join(a.dir, "release"),
		traceEnv+"=1", "LANG=en_US.UTF-8", "GOTRACEBACK=all")
	stderr, err := a.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, a.cmd.Start())
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			a.mu.Lock()
			a.lines = append(a.lines, s.Text())
			a.mu.Unlock()
			select {
			case a.seen <- struct{}{}:
			default:
			}
		}
		_ = a.cmd.Wait() // after the pipe's EOF, as os/exec asks
		close(a.exited)
	}()
	t.Cleanup(func() {
		_ = a.cmd.Process.Kill()
		<-a.exited
	})
	a.x, err = xwin.Dial(display)
	require.NoError(t, err)
	t.Cleanup(a.x.Close)
	var why error
	a.poll(50*time.Millisecond, func() bool {
		w, err := a.x.Find(title)
		if err == nil {
			// No window manager gives it the keyboard: the test does,
			// as a click on the window would. X refuses the focus
			// (BadMatch) until the window is mapped.
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			focus := exec.CommandContext(ctx, "xdotool", "windowfocus", "--sync", strconv.FormatUint(uint64(w), 10))
			focus.Env = append(os.Environ(), "DISPLAY="+display)
			out, ferr := focus.CombinedOutput()
			if ferr == nil {
				return true
			}
			err = fmt.Errorf("xdotool windowfocus: %w: %s", ferr, out)
		}
		why = err
		return false
	}, func() string { return fmt.Sprintf("no window %q: %v", title, why) })
	return a
}

// poll calls done every interval until it reports true, and fails the test
// with what's words and the app's stderr after hangGuard or once the app
// exited. What it waits for is another process's state (the X server's,
// the kernel's), which sends this one no word when it changes.
func (a *fyneApp) poll(interval time.Duration, done func() bool, what func() string) {
	a.t.Helper()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for !done() {
		select {
		case <-tick.C:
		case <-a.exited:
			if !done() {
				a.t.Fatalf("the app exited: %s\n%s", what(), a.stderr())
			}
			return
		case <-timer.C:
			a.t.Fatalf("%s\n%s", what(), a.stderr())
		}
	}
}

// typeText types text with xdotool at 20 ms a key and waits until the
// text box holds what it held plus text.
func (a *fyneApp) typeText(text string) {
	a.t.Helper()
	want := a.lastText() + text
	a.xdo("type", "--delay", "20", text)
	a.waitLine("text: " + strconv.Quote(want))
}

func (a *fyneApp) lastText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.lines) - 1; i >= 0; i-- {
		if q, ok := strings.CutPrefix(a.lines[i], "text: "); ok {
			if s, err := strconv.Unquote(q); err == nil {
				return s
			}
		}
	}
	return ""
}

func (a *fyneApp) xdo(args ...string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+a.display)
	out, err := cmd.CombinedOutput()
	require.NoError(a.t, err, "xdotool %v: %s", args, out)
}

func (a *fyneApp) signal(sig syscall.Signal) {
	a.t.Helper()
	require.NoError(a.t, a.cmd.Process.Signal(sig))
}

func (a *fyneApp) closeWindow() {
	a.t.Helper()
	w, err := a.x.Find(title)
	require.NoError(a.t, err)
	require.NoError(a.t, a.x.CloseWindow(w))
}

// waitDelivered waits until no thread of the app has sig pending: the
// kernel has delivered it (SigPnd and ShdPnd in /proc/<pid>/task/<tid>/status,
// proc(5)).
func (a *fyneApp) waitDelivered(sig syscall.Signal) {
	a.t.Helper()
	bit := uint64(1) << (sig - 1)
	a.poll(5*time.Millisecond, func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", a.cmd.Process.Pid))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for l := range strings.Lines(string(b)) {
				k, v, _ := strings.Cut(strings.TrimSpace(l), ":")
				m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if (k == "SigPnd" || k == "ShdPnd") && err == nil && m&bit != 0 {
					return false
				}
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%v still pending", sig) })
}

// release lets the held flush end.
func (a *fyneApp) release() {
	a.t.Helper()
	require.NoError(a.t, os.WriteFile(filepath.Join(a.dir, "release"), nil, 0o600))
}

// waitLine waits until a line of the app's stderr holds want.
func (a *fyneApp) waitLine(want string) {
	a.t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for a.count(want) == 0 {
		select {
		case <-a.seen:
		case <-a.exited:
			if a.count(want) == 0 {
				a.t.Fatalf("the app exited without printing %q\n%s", want, a.stderr())
			}
		case <-timer.C:
			a.t.Fatalf("no line %q\n%s", want, a.stderr())
		}
	}
}

// waitGone waits until the window is gone.
func (a *fyneApp) waitGone() {
	a.t.Helper()
	a.poll(20*time.Millisecond, func() bool {
		_, err := a.x.Find(title)
		return err != nil
	}, func() string { return "the window is still there" })
}

// waitScreen takes screenshots until OCR reads every want on screen.
func (a *fyneApp) waitScreen(want ...string) {
	a.t.Helper()
	var text string
	a.poll(200*time.Millisecond, func() bool {
		img, err := xwin.Screenshot(a.display)
		require.NoError(a.t, err)
		text, err = xwin.OCR(img)
		require.NoError(a.t, err)
		for _, w := range want {
			if !strings.Contains(xwin.Letters(text), xwin.Letters(w)) {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("on screen: want %q, got (OCR):\n%s", want, text) })
}

func (a *fyneApp) requireExit(want int) {
	a.t.Helper()
	select {
	case <-a.exited:
	case <-time.After(hangGuard):
		_ = a.cmd.Process.Signal(syscall.SIGQUIT) // the Go runtime prints every goroutine
		<-a.exited
		a.t.Fatalf("the app did not exit\n%s", a.stderr())
	}
	require.Equal(a.t, want, a.cmd.ProcessState.ExitCode(), "exit status\n%s", a.stderr())
}

// count counts the lines of stderr that hold s.
func (a *fyneApp) count(s string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, l := range a.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

func (a *fyneApp) stderr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.lines, "\n")
}

// draft is the text drafts.json holds for the text box.
func (a *fyneApp) draft() string {
	a.t.Helper()
	b, err := os.ReadFile(filepath.Join(a.dir, "drafts.json"))
	require.NoError(a.t, err)
	var d struct {
		Drafts map[string]struct{ Text string }
	}
	require.NoError(a.t, json.Unmarshal(b, &d), "%s", b)
	return d.Drafts[tab].Text
}
