package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuitsWhenTerminalGoes runs the app, with its agents, on a real pty and
// takes the pty away, as closing a terminal window does: the app quits
// through its quit path within 5 s (the draft typed just before is on disk,
// every agent has ended), whether the hangup also brings SIGHUP (the pty is
// the app's controlling terminal: exit status 129) or not (it is not, or the
// app is neither the session's leader nor in its foreground: status 1).
func TestQuitsWhenTerminalGoes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctty   bool
		status int
	}{
		{"no SIGHUP", false, 1},
		{"SIGHUP too", true, 128 + int(syscall.SIGHUP)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := startOnPTY(t, tc.ctty)
			app.typeText("hi hangup")
			require.NoError(t, app.term.Close()) // the terminal is gone
			app.assertQuit(tc.status, "hi hangup")
		})
	}
}

// TestSIGTERMEndsStuckApp stops reading the app's terminal, as a frozen
// terminal or a stalled ssh connection does, and resizes it until a write of
// the app's blocks, and the UI loop with it: SIGTERM still runs the quit
// path and ends the app within 5 s.
func TestSIGTERMEndsStuckApp(t *testing.T) {
	app := startOnPTY(t, true) // resizes (SIGWINCH) reach a foreground process only
	app.typeText("hi stuck")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; !app.blockedWriting(); i++ {
		require.NoError(t, ctx.Err(), "no write of the app's blocked")
		require.NoError(t, setSize(app.term, 100+uint16(i%2)*20, 30))
	}
	require.NoError(t, app.cmd.Process.Signal(syscall.SIGTERM))
	app.assertQuit(128+int(syscall.SIGTERM), "hi stuck")
}

// ptyApp is this test binary running as the app on a pty.
type ptyApp struct {
	t      *testing.T
	cmd    *exec.Cmd
	term   *os.File // the pty's master: the terminal's side
	screen bytes.Buffer
	state  string
	tmp    string          // TMPDIR: the stand-in agents' scratch folders
	agents []int           // the app's children once its agents run
	exited <-chan struct{} // closed when cmd has been waited for
}

// startOnPTY starts the app, every chat's agent running, on a 100x30 pty
// (its controlling terminal if ctty), and waits until both agents run.
func startOnPTY(t *testing.T, ctty bool) *ptyApp {
	t.Helper()
	dir := t.TempDir()
	a := &ptyApp{t: t, state: filepath.Join(dir, "state"), tmp: t.TempDir()}
	var slave *os.File
	a.term, slave = openPTY(t, 100, 30)
	exe, err := os.Executable()
	require.NoError(t, err)
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, stderr.Close()) })
	// env --default-signal=HUP: SIGHUP at its default, as a terminal
	// emulator starts its shell, even when this test runs under nohup(1)
	// (execve(2) keeps an ignored signal ignored, and the app rightly leaves
	// it so). env execs the app: its pid, session and terminal are the app's.
	a.cmd = exec.Command("env", "--default-signal=HUP", exe, "-dir", a.state, "-chats", "general,build", "-agents")
	// The environment of a terminal emulator: what the app asks of its
	// terminal (below) depends on TERM, which a test run may lack or have
	// "dumb", and termenv treats any CI variable as "not a terminal"
	// (termenv.go, isTTY), which CI machines set.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") {
			env = append(env, kv)
		}
	}
	a.cmd.Env = append(env, appEnv+"=1", "OFFMAIN_QOS=utility", "TMPDIR="+a.tmp, "TERM=xterm-256color")
	a.cmd.Stdin, a.cmd.Stdout, a.cmd.Stderr = slave, slave, stderr
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: ctty, Ctty: 0}
	require.NoError(t, a.cmd.Start())
	require.NoError(t, slave.Close())
	a.exited = waitCmd(t, a.cmd)
	if ctty {
		// In the foreground of its terminal, termenv asks it for its
		// background colour (OSC 11) and the cursor's place, and waits 5 s
		// for answers: answer as a terminal does.
		a.readUntil("\x1b]11;?")
		_, err := a.term.Write([]byte("\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[1;1R"))
		require.NoError(t, err)
	}
	a.readUntil("2 agents:")
	a.agents = children(t, a.cmd.Process.Pid)
	require.Len(t, a.agents, 2, "the app's children: its agents")
	return a
}

// typeText types text in one write and reads until it is on the screen.
func (a *ptyApp) typeText(text string) {
	a.t.Helper()
	_, err := a.term.Write([]byte(text))
	require.NoError(a.t, err)
	a.readUntil(text)
}

// readUntil reads what the app writes to its terminal until text has come,
// failing the test after 20 s.
func (a *ptyApp) readUntil(text string) {
	a.t.Helper()
	require.NoError(a.t, a.term.SetReadDeadline(time.Now().Add(20*time.Second)))
	b := make([]byte, 4096)
	for !bytes.Contains(a.screen.Bytes(), []byte(text)) {
		n, err := a.term.Read(b)
		a.screen.Write(b[:n])
		require.NoError(a.t, err, "reading until %q", text)
	}
}

// blockedWriting reports whether a thread of the app sleeps in a write to
// its stdout: /proc/PID/task/TID/syscall starts with the call's number and
// its first argument, and the thread's stat has state S (proc(5)).
func (a *ptyApp) blockedWriting() bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", a.cmd.Process.Pid))
	require.NoError(a.t, err)
	for _, task := range tasks {
		call, err1 := os.ReadFile(filepath.Join(task, "syscall"))
		stat, err2 := os.ReadFile(filepath.Join(task, "stat"))
		if err1 != nil || err2 != nil { // the thread ended
			continue
		}
		state := stat[bytes.LastIndexByte(stat, ')')+2]
		if state == 'S' && strings.HasPrefix(string(call), fmt.Sprintf("%d 0x1 ", syscall.SYS_WRITE)) {
			return true
		}
	}
	return false
}

// assertQuit checks that the app exits within 5 s with status, after its
// quit path: the hook's report printed, draft on disk, every agent ended.
func (a *ptyApp) assertQuit(status int, draft string) {
	t := a.t
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case <-a.exited:
	case <-timer.C:
		t.Fatal("the app still runs 5 s later")
	}
	assert.Equal(t, status, a.cmd.ProcessState.ExitCode(), "exit status")
	stderr, err := os.ReadFile(filepath.Join(filepath.Dir(a.state), "stderr"))
	require.NoError(t, err)
	assert.Contains(t, string(stderr), "saved 3/3", "the hook's report")
	assert.Equal(t, map[string]string{"general": draft}, diskDrafts(t, a.state), "drafts on disk")
	for _, pid := range a.agents {
		assert.NoError(t, processGone(pid), "agent %d", pid)
	}
	left, err := filepath.Glob(filepath.Join(a.tmp, "composer-agent-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the agents' scratch folders: each agent ended on its own")
}

// waitCmd waits for cmd in a goroutine that ends with it; the returned
// channel is closed then. Cleanup kills cmd if it still runs and waits.
func waitCmd(t *testing.T, cmd *exec.Cmd) <-chan struct{} {
	t.Helper()
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = cmd.Wait() // its status is in cmd.ProcessState
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// openPTY opens a pty pair of w×h cells (pty(7): /dev/ptmx, unlocked, its
// slave named by TIOCGPTN). The master stays in Go's poller (no File.Fd), so
// that reads have deadlines and Close closes it at once: the slave then hangs
// up (pty_close in drivers/tty/pty.c).
func openPTY(t *testing.T, w, h uint16) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = master.Close() }) // a test may have closed it
	var unlock int32
	var n uint32
	require.NoError(t, ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)))
	require.NoError(t, ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)))
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = slave.Close() }) // the test closes it once the app has it
	require.NoError(t, setSize(master, w, h))
	return master, slave
}

// setSize sets the size of f's terminal, as a terminal window's resize does
// (TIOCSWINSZ, which sends SIGWINCH to its foreground; tty_ioctl(4)).
func setSize(f *os.File, w, h uint16) error {
	ws := struct{ row, col, x, y uint16 }{h, w, 0, 0}
	return ioctl(f, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
}

// ioctl runs ioctl(2) on f without taking f out of non-blocking mode (as
// File.Fd would).
func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
	}); err != nil {
		return err
	}
	if errno != 0 {
		return fmt.Errorf("ioctl %#x: %w", req, errno)
	}
	return nil
}

// children returns the pids of pid's children, from every thread's
// /proc/PID/task/TID/children (proc(5)).
func children(t *testing.T, pid int) []int {
	t.Helper()
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	require.NoError(t, err)
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, s := range strings.Fields(string(b)) {
			p, err := strconv.Atoi(s)
			require.NoError(t, err)
			pids = append(pids, p)
		}
	}
	return pids
}

// processGone returns nil if pid no longer exists: the app that started it
// waited for it, so it is not even a zombie.
func processGone(pid int) error {
	err := syscall.Kill(pid, 0)
	if err == syscall.ESRCH {
		return nil
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return fmt.Errorf("process %d (%q) still exists: kill(0): %v", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}), err)
}
