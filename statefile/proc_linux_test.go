package statefile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A second process for the multi-process tests is this test binary run
// again on one test (-test.run=^TestX$), with childRoleEnv telling the
// test to play the child, as os/exec's own tests do. Parent and child
// talk in lines: commands on the child's stdin, reports on its stdout. No
// sleeps: each side waits for the other's line.

const (
	childRoleEnv = "OFFMAIN_STATEFILE_CHILD" // the child's role; unset in the parent
	childPathEnv = "OFFMAIN_STATEFILE_PATH"  // the state file the child works on
)

// lineWait bounds each wait for a child's line, so a broken child fails
// the test with its stderr instead of hanging it; it paces nothing.
const lineWait = 30 * time.Second

// proc is a child process seen from the parent.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string   // the child's stdout lines; closed at its EOF
	stop   chan struct{} // closed at cleanup: the line reader stops sending
	read   chan struct{} // closed when the line reader ended
	stderr strings.Builder
	waited bool
}

// startProc runs the test named test as a child in role, on path.
func startProc(t *testing.T, test, role, path string) *proc {
	t.Helper()
	p := &proc{t: t, lines: make(chan string, 64), stop: make(chan struct{}), read: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	// Under -race a clean exit waits a second for late race reports
	// (GORACE atexit_sleep_ms, default 1000); the child's goroutines have
	// ended by then (goleak checks), so it need not.
	race := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	p.cmd.Env = append(os.Environ(), childRoleEnv+"="+role, childPathEnv+"="+path, "GORACE="+race)
	p.cmd.Stderr = &p.stderr
	var err error
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go p.readLines(stdout) // ends at the child's EOF
	t.Cleanup(func() {
		if !p.waited {
			p.cmd.Process.Kill() //nolint:errcheck // it may have exited
			p.wait()             //nolint:errcheck
		}
	})
	return p
}

func (p *proc) readLines(stdout io.Reader) {
	defer close(p.read)
	defer close(p.lines)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		select {
		case p.lines <- sc.Text():
		case <-p.stop:
			return
		}
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// send writes one command line to the child.
func (p *proc) send(line string) {
	p.t.Helper()
	_, err := fmt.Fprintln(p.stdin, line)
	require.NoError(p.t, err)
}

// expect requires the child's next line to be want.
func (p *proc) expect(want string) {
	p.t.Helper()
	timer := time.NewTimer(lineWait)
	defer timer.Stop()
	select {
	case got, ok := <-p.lines:
		if !ok {
			p.wait() //nolint:errcheck // its stderr says more
			p.t.Fatalf("child exited; want line %q; stderr:\n%s", want, p.stderr.String())
		}
		require.Equal(p.t, want, got, "child's next line")
	case <-timer.C:
		p.cmd.Process.Kill() //nolint:errcheck
		p.wait()             //nolint:errcheck
		p.t.Fatalf("no line from the child in %v; want %q; stderr:\n%s", lineWait, want, p.stderr.String())
	}
}

// exit closes the child's stdin, which tells it to finish, requires its
// last line to be "bye" and its exit to be clean.
func (p *proc) exit() {
	p.t.Helper()
	require.NoError(p.t, p.stdin.Close())
	p.expect("bye")
	err := p.wait()
	require.NoError(p.t, err, "child's exit; stderr:\n%s", p.stderr.String())
}

// kill ends the child with SIGKILL and waits for it.
func (p *proc) kill() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGKILL))
	err := p.wait()
	var exit *exec.ExitError
	require.ErrorAs(p.t, err, &exit)
	ws, _ := exit.Sys().(syscall.WaitStatus)
	require.Equal(p.t, syscall.SIGKILL, ws.Signal())
}

// wait drops the lines not read (the test framework's "PASS"), then
// reaps the child: os/exec wants every read from the pipe done before Wait.
func (p *proc) wait() error {
	p.waited = true
	close(p.stop)
	<-p.read
	return p.cmd.Wait()
}

// childOut is the child's stdout: one line per report, whole, from any
// goroutine (the watch's fn reports from its own).
type childOut struct{ mu sync.Mutex }

func (o *childOut) say(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Printf(format+"\n", args...)
}

// commands returns the child's stdin lines; it ends when the parent closes
// the pipe.
func commands() *bufio.Scanner { return bufio.NewScanner(os.Stdin) }
