//go:build unix

package quit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/flush"
)

// childEnv, set, makes the test binary run the named scenario (see
// TestMain's callers below) in a process of its own: the scenarios end the
// process with os.Exit.
const childEnv = "OFFMAIN_QUIT_TEST_CHILD"

// TestFirstSignalAsksUIToQuit sends the test process SIGTERM: the watcher
// catches it, asks the UI to quit, and End returns 128+SIGTERM. (Not
// SIGHUP: a test run under nohup(1) starts with it ignored, and the watcher
// rightly leaves it so; the children below get it at its default.)
func TestFirstSignalAsksUIToQuit(t *testing.T) {
	asked := make(chan os.Signal, 1)
	w := Watch(Options{Name: "test", Quit: func(s os.Signal) { asked <- s }})
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case s := <-asked:
		assert.Equal(t, syscall.SIGTERM, s)
	case <-timer.C:
		t.Fatal("Quit not called within 10s of SIGTERM")
	}
	assert.Equal(t, 128+int(syscall.SIGTERM), w.End(flush.Report{Saved: true, Stopped: true}, t.TempDir(), nil))
}

// TestSecondSignalExits: Ctrl-C again while quitting exits at once with
// 128+SIGINT.
func TestSecondSignalExits(t *testing.T) {
	if os.Getenv(childEnv) == "second" {
		// The second signal goes once the first has arrived: two pending
		// SIGINTs would be one (signal(7), standard signals do not queue).
		again := func(os.Signal) { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) }
		Watch(Options{Name: "child", Quit: again})
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		hang() // the watcher exits the process
	}
	code, stderr := runChild(t, "TestSecondSignalExits", "second", nil)
	assert.Equal(t, 128+int(syscall.SIGINT), code)
	assert.Contains(t, stderr, "child: interrupt again while quitting: exiting now")
}

// TestLogoutKeepsQuitting: a logout's SIGHUP right after its SIGTERM
// (systemd-logind) does not cut the quit short: the UI ends and End returns
// 128+SIGTERM. Before, the second signal exited at once, flushing nothing.
func TestLogoutKeepsQuitting(t *testing.T) {
	if os.Getenv(childEnv) == "logout" {
		ended := make(chan struct{})
		w := Watch(Options{Name: "child", Quit: func(os.Signal) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
			go func() { // the UI's quit path takes a moment
				timer := time.NewTimer(200 * time.Millisecond)
				<-timer.C
				close(ended)
			}()
		}})
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		<-ended
		w.UIEnded()
		os.Exit(w.End(flush.Report{Saved: true, Stopped: true}, os.TempDir(), nil))
	}
	code, stderr := runChild(t, "TestLogoutKeepsQuitting", "logout", nil)
	assert.Equal(t, 128+int(syscall.SIGTERM), code, "exit status: got/want; stderr: %s", stderr)
	assert.Contains(t, stderr, "child: hangup while quitting on terminated: still quitting")
	assert.Contains(t, stderr, flush.Report{Saved: true, Stopped: true}.String())
}

// TestIgnoredHangupStaysIgnored: started with SIGHUP ignored, as nohup
// starts a program, the app does not quit on SIGHUP (its terminal closing);
// SIGTERM still quits it. signal.Notify alone would have caught the SIGHUP.
func TestIgnoredHangupStaysIgnored(t *testing.T) {
	if os.Getenv(childEnv) == "nohup" {
		asked := make(chan os.Signal, 2)
		w := Watch(Options{Name: "child", Quit: func(s os.Signal) { asked <- s }})
		_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
		// A caught SIGHUP reaches Quit within microseconds; half a second
		// without it is an ignored one.
		timer := time.NewTimer(500 * time.Millisecond)
		select {
		case <-asked:
			os.Exit(4)
		case <-timer.C:
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		<-asked
		w.UIEnded()
		os.Exit(w.End(flush.Report{Saved: true, Stopped: true}, os.TempDir(), nil))
	}
	// sh's trap '' HUP sets SIGHUP to ignored, and exec keeps it so
	// (execve(2)), which is what nohup(1) does.
	code, stderr := runChild(t, "TestIgnoredHangupStaysIgnored", "nohup", []string{"sh", "-c", `trap '' HUP; exec "$0" "$@"`})
	assert.Equal(t, 128+int(syscall.SIGTERM), code, "exit status: got/want (4: the SIGHUP quit it); stderr: %s", stderr)
}

// TestStuckUIIsFlushed: a UI that does not end within Stuck is flushed from
// the watcher, which prints the report and exits with 128+signal.
func TestStuckUIIsFlushed(t *testing.T) {
	if os.Getenv(childEnv) == "stuck" {
		Watch(Options{Name: "child", Quit: func(os.Signal) {}, Stuck: time.Millisecond,
			Flush: func() flush.Report { return flush.Report{Saved: true, Stopped: true} }})
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		hang() // the UI never ends; the watcher exits the process
	}
	code, stderr := runChild(t, "TestStuckUIIsFlushed", "stuck", nil)
	assert.Equal(t, 128+int(syscall.SIGTERM), code)
	assert.Contains(t, stderr, "child: the UI did not end within 1ms: flushing from here")
	assert.Contains(t, stderr, flush.Report{Saved: true, Stopped: true}.String())
}

// hang blocks the child until the watcher exits it; if it does not, the
// child exits with status 3 after a bound.
func hang() {
	timer := time.NewTimer(10 * time.Second)
	<-timer.C
	os.Exit(3)
}

// runChild re-runs the test binary for test with childEnv set to scenario,
// through the command wrap (a shell that sets up signals) if not nil, and
// returns its exit status and stderr.
func runChild(t *testing.T, test, scenario string, wrap []string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	args := append(append(append([]string(nil), wrap...), exe), "-test.run=^"+test+"$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"="+scenario)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// As a session's app starts: SIGHUP and SIGINT at their defaults, even
	// when this test runs under nohup(1) or as a script's background job
	// (execve(2) keeps an ignored signal ignored, and the watcher rightly
	// leaves it so). While a Notify holds them, this process catches them,
	// and a caught signal is reset to its default at exec (signal(7)); Stop
	// puts back what was there.
	held := make(chan os.Signal, 1)
	signal.Notify(held, syscall.SIGHUP, syscall.SIGINT)
	err = cmd.Start()
	signal.Stop(held)
	require.NoError(t, err)
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the child exits with a status: %v; stderr: %s", err, stderr.String())
	return exit.ExitCode(), stderr.String()
}
