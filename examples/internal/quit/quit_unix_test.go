//go:build unix

package quit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
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

// TestFirstSignalAsksUIToQuit sends the test process SIGHUP: the watcher
// catches it, asks the UI to quit, and End returns 128+SIGHUP.
func TestFirstSignalAsksUIToQuit(t *testing.T) {
	asked := make(chan os.Signal, 1)
	w := Watch(Options{Name: "test", Quit: func(s os.Signal) { asked <- s }})
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case s := <-asked:
		assert.Equal(t, syscall.SIGHUP, s)
	case <-timer.C:
		t.Fatal("Quit not called within 10s of SIGHUP")
	}
	assert.Equal(t, 128+int(syscall.SIGHUP), w.End(flush.Report{Drained: true}, t.TempDir(), nil))
}

// TestSecondSignalExits: a second signal while quitting exits at once with
// 128+signal.
func TestSecondSignalExits(t *testing.T) {
	if os.Getenv(childEnv) == "second" {
		// The second signal goes once the first has arrived: two pending
		// SIGTERMs would be one (signal(7), standard signals do not queue).
		again := func(os.Signal) { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) }
		Watch(Options{Name: "child", Quit: again})
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		hang() // the watcher exits the process
	}
	code, stderr := runChild(t, "TestSecondSignalExits", "second")
	assert.Equal(t, 128+int(syscall.SIGTERM), code)
	assert.Contains(t, stderr, "child: terminated again while quitting: exiting now")
}

// TestStuckUIIsFlushed: a UI that does not end within Stuck is flushed from
// the watcher, which prints the report and exits with 128+signal.
func TestStuckUIIsFlushed(t *testing.T) {
	if os.Getenv(childEnv) == "stuck" {
		Watch(Options{Name: "child", Quit: func(os.Signal) {}, Stuck: time.Millisecond,
			Flush: func() flush.Report { return flush.Report{Drained: true} }})
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		hang() // the UI never ends; the watcher exits the process
	}
	code, stderr := runChild(t, "TestStuckUIIsFlushed", "stuck")
	assert.Equal(t, 128+int(syscall.SIGTERM), code)
	assert.Contains(t, stderr, "child: the UI did not end within 1ms: flushing from here")
	assert.Contains(t, stderr, flush.Report{Drained: true}.String())
}

// hang blocks the child until the watcher exits it; if it does not, the
// child exits with status 3 after a bound.
func hang() {
	timer := time.NewTimer(10 * time.Second)
	<-timer.C
	os.Exit(3)
}

// runChild re-runs the test binary for test with childEnv set to scenario
// and returns its exit status and stderr.
func runChild(t *testing.T, test, scenario string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), childEnv+"="+scenario)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the child exits with a status: %v; stderr: %s", err, stderr.String())
	return exit.ExitCode(), stderr.String()
}
