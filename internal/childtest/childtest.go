// Package childtest runs a test binary again as a child process, as
// os/exec's tests do: the child runs TestChild, selected by -test.run and
// told its part by an environment variable, and the parent reads its
// output line by line and its exit status.
package childtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Child is a child process started by Start.
type Child struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout <-chan string // the lines after "ready"; closed at EOF
	Stderr <-chan string // every line; closed at EOF
	ErrBuf *Lines        // all of stderr
}

// Start runs TestChild of this test binary with modeEnv=mode in its
// environment, and env, and waits for it to print "ready". With wrapper
// (such as "nohup"), the child is started through that command.
func Start(t *testing.T, modeEnv, mode string, wrapper []string, env ...string) *Child {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	if len(wrapper) == 0 {
		// As a session's app starts: SIGHUP at its default. Under nohup
		// (or a test before this one that ignored it) the child would
		// inherit SIGHUP ignored (execve(2) keeps ignored signals ignored),
		// and the Go runtime's handler in this process is no sure way out:
		// it is reset for the child only while some Notify holds it.
		// env(1) --default-signal (coreutils 8.31) resets it in the child.
		wrapper = []string{"env", "--default-signal=HUP"}
	}
	args := append(append([]string(nil), wrapper...), os.Args[0], "-test.run=^TestChild$", "-test.count=1")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	// atexit_sleep_ms=0: the race detector otherwise waits 1s at exit.
	cmd.Env = append(os.Environ(), append(env, modeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &Child{Cmd: cmd, Stdin: stdin, ErrBuf: &Lines{}}
	errLines := make(chan string, 64)
	c.Stderr = errLines
	// Both readers end at EOF, when the child exits; Wait waits for them.
	var readers sync.WaitGroup
	readers.Go(func() {
		defer close(errLines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.ErrBuf.WriteLine(sc.Text())
			select {
			case errLines <- sc.Text():
			default: // nobody reads them: the buffer keeps them
			}
		}
	})
	t.Cleanup(func() { _ = cmd.Process.Kill(); readers.Wait(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "ready" {
			lines := make(chan string, 64)
			c.Stdout = lines
			readers.Go(func() {
				defer close(lines)
				for sc.Scan() {
					lines <- sc.Text()
				}
			})
			return c
		}
	}
	t.Fatalf("child ended before it was ready: %v; stderr:\n%s", sc.Err(), c.ErrBuf)
	return nil
}

// Wait waits for the child to exit and returns its exit status.
func (c *Child) Wait(t *testing.T) int {
	t.Helper()
	for range c.Stdout { // drain, so the child never blocks on a full pipe
	}
	for range c.Stderr {
	}
	return ExitCode(t, c.Cmd.Wait())
}

// Lines is a bytes.Buffer of lines for one writer goroutine and readers
// on others.
type Lines struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (l *Lines) WriteLine(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
	l.b.WriteByte('\n')
}

func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ExitCode returns the exit status in err, which must be an *exec.ExitError.
func ExitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "child: got %v, want an exit status", err)
	return ee.ExitCode()
}
