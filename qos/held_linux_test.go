//go:build linux

package qos

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() { helpers["count-signals"] = countSignalsHelper }

// countSignalsHelper says ready, counts the SIGUSR1s and SIGINTs it gets
// and, at SIGTERM, prints both counts and exits.
func countSignalsHelper() int {
	c := make(chan os.Signal, 16)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTERM)
	fmt.Println("ready")
	usr1, ints := 0, 0
	for s := range c {
		switch s {
		case syscall.SIGTERM:
			fmt.Printf("counts %d %d\n", usr1, ints)
			return 0
		case syscall.SIGUSR1:
			usr1++
			fmt.Println("got SIGUSR1")
		case syscall.SIGINT:
			ints++
			fmt.Println("got SIGINT")
		}
	}
	return 1
}

// readCounts reads lines from r until count-signals' counts.
func readCounts(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "counts "); ok {
			return c
		}
	}
}

// TestHeldExitStatus: cmd.Wait reports the command's own end, an exit
// status or a signal, though cmd.Process is the keeper.
func TestHeldExitStatus(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", 0, 0},
		{"exit 3", 3, 0},
		{"kill -SEGV $$", -1, syscall.SIGSEGV},
		{"kill -TERM $$", -1, syscall.SIGTERM},
	} {
		t.Run(tc.script, func(t *testing.T) {
			var g Group
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			require.NoError(t, g.Start(cmd, Agent, ModeUtility))
			_ = cmd.Wait()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tc.sig != 0 {
				assert.True(t, ws.Signaled(), "got %v, want killed by %v", cmd.ProcessState, tc.sig)
				assert.Equal(t, tc.sig, ws.Signal())
				assert.False(t, ws.CoreDump(), "the keeper dumps no core of its own")
				return
			}
			assert.Equal(t, tc.code, cmd.ProcessState.ExitCode(), "got %v", cmd.ProcessState)
		})
	}
}

// TestHeldStartError: a command that cannot start fails Start as
// cmd.Start would, and is left not started.
func TestHeldStartError(t *testing.T) {
	var g Group
	cmd := exec.Command("/nonexistent/agent")
	err := g.Start(cmd, Agent, ModeUtility)
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "fork/exec", pe.Op)
	assert.Equal(t, "/nonexistent/agent", pe.Path)
	assert.Nil(t, cmd.Process, "a command that did not start has no Process")
	assert.Equal(t, "/nonexistent/agent", cmd.Path, "cmd is as the caller made it")

	lookup := exec.Command("no-such-agent-in-path")
	assert.ErrorIs(t, g.Start(lookup, Agent, ModeUtility), exec.ErrNotFound)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	assert.NoError(t, g.Stop(ctx), "nothing started, nothing to stop")
}

// TestHeldSignals: a signal to cmd.Process, and one to its process group,
// each reach the command once.
func TestHeldSignals(t *testing.T) {
	var g Group
	cmd := helperCmd("TestHeldSignals", "count-signals")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(cmd, Agent, ModeUtility))
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	// One at a time: a signal sent while the same one is pending merges
	// with it (signal(7)).
	require.NoError(t, cmd.Process.Signal(syscall.SIGUSR1))
	line, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "got SIGUSR1\n", line)
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGUSR1), "the command's process group is cmd.Process's pid")
	line, err = r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "got SIGUSR1\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, "2 0", readCounts(t, r), "SIGUSR1s the command got: one to the pid, one to the group")
	assert.NoError(t, cmd.Wait())
}

// TestHeldKillEndsTree: killing cmd.Process, as exec.CommandContext's
// cancel and cmd.Process.Kill do, ends the command's whole tree.
func TestHeldKillEndsTree(t *testing.T) {
	for _, how := range []string{"context", "Kill"} {
		t.Run(how, func(t *testing.T) {
			var g Group
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			agent := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHeldKillEndsTree$")
			agent.Env = append(os.Environ(), helperEnv+"=tree-agent", noRaceExitSleep())
			out, err := agent.StdoutPipe()
			require.NoError(t, err)
			_, err = agent.StdinPipe()
			require.NoError(t, err)
			require.NoError(t, g.Start(agent, Agent, ModeUtility))
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)
			pids, err := parseTreePids(line)
			require.NoError(t, err, "agent said %q", line)
			fds := runningTree(t, pids.all())
			killed := time.Now()
			if how == "context" {
				cancel()
			} else {
				require.NoError(t, agent.Process.Kill())
			}
			err = agent.Wait()
			assert.Error(t, err, "killed")
			requireKilled(t, fds, pids.all(), killed.Add(time.Second), "a second after cmd.Process was killed ("+how+")")
		})
	}
}

// TestHeldOutput: the helpers hold none of the command's pipes, so its
// output arrives whole and Wait returns when it exits.
func TestHeldOutput(t *testing.T) {
	var g Group
	cmd := exec.Command("/bin/sh", "-c", "cat; echo err >&2; echo out")
	cmd.Stdin = strings.NewReader("in\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = helperWaitDelay // a helper holding a pipe fails the test rather than hanging it
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Args = []string{"sh", "-c", "echo extra >&3; cat; echo err >&2; echo out"}
	require.NoError(t, g.Start(cmd, Agent, ModeUtility))
	require.NoError(t, w.Close())
	extra, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	assert.Equal(t, "in\nout\n", stdout.String())
	assert.Equal(t, "err\n", stderr.String())
	assert.Equal(t, "extra\n", string(extra), "ExtraFiles keep their numbers")
}

// TestHeldTerminal: a command started as a terminal's session leader
// (Setsid, Setctty) runs in the keeper's session, in the foreground group
// of that terminal, so what the terminal sends (^C: SIGINT) reaches it
// once, and its autogroup gets the tier's nice value.
func TestHeldTerminal(t *testing.T) {
	master, slave := openPty(t)
	var g Group
	cmd := helperCmd("TestHeldTerminal", "count-signals")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, g.Start(cmd, Agent, ModeUtility))
	require.NoError(t, slave.Close())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(master)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\r\n", line)
	_, agent, ok := heldBy(cmd.Process.Pid)
	require.True(t, ok)
	p, ok := readProc(agent)
	require.True(t, ok)
	assert.Equal(t, cmd.Process.Pid, p.sid, "the command is in the keeper's session")
	fg, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP)
	require.NoError(t, err)
	assert.Equal(t, p.pgid, fg, "the terminal's foreground group is the command's")
	if autogroupOn() {
		waitFollowUps(t)
		a, err := Inspect(cmd.Process.Pid)
		require.NoError(t, err)
		assert.Equal(t, utilityNice, a.AutogroupNice, "the session's autogroup: %s", a)
	}
	_, err = master.Write([]byte{3}) // ^C: the terminal sends SIGINT to its foreground group
	require.NoError(t, err)
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if strings.Contains(line, "got SIGINT") {
			break // after the terminal's echo of ^C
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, "0 1", readCounts(t, r), "SIGINTs the command got from the terminal's ^C")
}

// openPty opens a pseudo-terminal pair (pty(7)): /dev/ptmx, unlocked,
// and the /dev/pts file it names.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /dev/ptmx: this machine offers no pseudo-terminals")
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	return m, s
}

// TestHeldWaitReturnsAtCommandExit: cmd.Wait of a held command returns
// when the command exits, with its own status, as os/exec's does for any
// command, while what it left in the background stays held (Inspect of
// cmd.Process still reads it) until Stop ends it.
func TestHeldWaitReturnsAtCommandExit(t *testing.T) {
	g := Group{KillAfter: 2 * time.Second}
	cmd := exec.Command("/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!; exit 3")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(cmd, Agent, ModeUtility))
	t.Cleanup(func() { stopGroup(t, &g) })
	var sleep int
	_, err = fmt.Fscan(out, &sleep)
	require.NoError(t, err)
	fds := runningTree(t, []int{sleep})
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	limit := time.NewTimer(10 * time.Second)
	defer limit.Stop()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 3, ee.ExitCode(), "the command's own status")
	case <-limit.C:
		t.Fatalf("cmd.Wait still waits 10 s after the command exited 3, for the sleep it left (pid %d)", sleep)
	}
	assert.False(t, exitsWithin(t, fds[0], 0), "the sleep the command left runs on, held")
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err, "Inspect of cmd.Process once the command exited")
	assert.Equal(t, sleep, a.Pid, "what the command left stands for it: %s", a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	assert.NoError(t, g.Stop(ctx), "the sleep ends on SIGTERM")
	requireGone(t, fds, []int{sleep}, time.Now(), "when Stop returned")
}

// stopGroup stops g at the end of a test, so that nothing a held command
// left outlives it.
func stopGroup(t *testing.T, g *Group) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Stop(ctx); err != nil && !errors.Is(err, ErrKilled) {
		t.Errorf("stopping the test's Group: %v", err)
	}
}

func init() {
	helpers["note-usr1"] = noteUsr1Helper
	helpers["pdeath-held-app"] = pdeathHeldAppHelper
}

// noteUsr1Helper says ready, and at SIGUSR1 notes it in groupDirEnv's
// usr1 file and exits 0.
func noteUsr1Helper() int {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	fmt.Println("ready")
	<-c
	if err := os.WriteFile(filepath.Join(os.Getenv(groupDirEnv), "usr1"), []byte("usr1\n"), 0o644); err != nil {
		return 1
	}
	return 0
}

// pdeathHeldAppHelper is an app that starts, through a Group with Main,
// two commands whose SysProcAttr.Pdeathsig is SIGUSR1: one that exits on
// it, one that ignores it. It prints their own pids and waits for its
// death.
func pdeathHeldAppHelper() int {
	g := Group{KillAfter: 300 * time.Millisecond}
	polite := helperCmd("TestHeldPdeathsig", "note-usr1", groupDirEnv+"="+os.Getenv(groupDirEnv))
	deaf := exec.Command("/bin/sh", "-c", "trap '' USR1; echo ready; sleep 1000; true")
	var pids []any
	for _, cmd := range []*exec.Cmd{polite, deaf} {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGUSR1}
		if err := startReady(&g, cmd); err != nil {
			fmt.Println(err)
			return 1
		}
		a, err := Inspect(cmd.Process.Pid)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		pids = append(pids, a.Pid)
	}
	fmt.Println(pids...)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestHeldPdeathsig: a held command's own SysProcAttr.Pdeathsig is
// delivered when the app dies (as Go's TestDeathSignal and tini's
// parent-death test expect), before the holder ends the tree: a command
// that exits on it has the time to; one that ignores it is killed once the
// Group's KillAfter has passed.
func TestHeldPdeathsig(t *testing.T) {
	dir := t.TempDir()
	app := helperCmd("TestHeldPdeathsig", "pdeath-held-app", groupDirEnv+"="+dir)
	_, err := app.StdinPipe()
	require.NoError(t, err)
	out, err := app.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, app.Start())
	t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	var polite, deaf int
	_, err = fmt.Sscan(line, &polite, &deaf)
	require.NoError(t, err, "app said %q", line)
	fds := runningTree(t, []int{polite, deaf})
	require.NoError(t, app.Process.Kill())
	_ = app.Wait()
	killed := time.Now()
	requireKilled(t, fds, []int{polite, deaf}, killed.Add(300*time.Millisecond+time.Second), "KillAfter and a second after the app died")
	b, err := os.ReadFile(filepath.Join(dir, "usr1"))
	require.NoError(t, err, "the command's own parent-death signal, SIGUSR1, reached it")
	assert.Equal(t, "usr1\n", string(b))
}

// TestHeldCommandPid: for a held command, cmd.Process is qos's keeper, and
// Inspect gives the command's own pid, to which a signal no keeper can
// relay (SIGSTOP) goes.
func TestHeldCommandPid(t *testing.T) {
	var g Group
	cmd := exec.Command("/bin/sh", "-c", "echo $$; read x")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(cmd, Agent, ModeUtility))
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait(); stopGroup(t, &g) })
	var pid int
	_, err = fmt.Fscan(out, &pid)
	require.NoError(t, err)
	k, ok := readProc(cmd.Process.Pid)
	require.True(t, ok)
	assert.Equal(t, "qos-keeper", k.comm, "cmd.Process is the keeper")
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, pid, a.Pid, "Inspect names the command's own pid")
	require.NoError(t, unix.Kill(a.Pid, unix.SIGSTOP))
	require.Eventually(t, func() bool { p, _ := readProc(pid); return p.state == 'T' }, 10*time.Second, time.Millisecond,
		"SIGSTOP to Applied.Pid stops the command")
	require.NoError(t, unix.Kill(a.Pid, unix.SIGCONT))
}

// TestHeldStartErrorNamesCommand: a held command that cannot start fails
// as cmd.Start would say it, naming the command or its directory, never
// qos's helper binary (/proc/self/exe).
func TestHeldStartErrorNamesCommand(t *testing.T) {
	t.Run("Dir", func(t *testing.T) {
		var g Group
		cmd := exec.Command("/bin/true")
		cmd.Dir = "/nonexistent/qos-test-dir"
		err := g.Start(cmd, Agent, ModeUtility)
		require.Error(t, err)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, fs.PathError{Op: "chdir", Path: cmd.Dir, Err: syscall.ENOENT}, *pe, "as cmd.Start says it: %v", err)
		assert.Nil(t, cmd.Process, "a command that did not start has no Process")
		plain := exec.Command("/bin/true")
		plain.Dir = cmd.Dir
		assert.Equal(t, plain.Start().Error(), err.Error(), "the same words as os/exec's")
	})
	t.Run("Ctty", func(t *testing.T) {
		var g Group
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 99} // no such descriptor
		err := g.Start(cmd, Agent, ModeUtility)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), selfExe, "the error names qos's helper: %v", err)
		assert.Contains(t, err.Error(), cmd.Path, "the error names the command: %v", err)
		assert.Nil(t, cmd.Process)
	})
}

// TestHeldExtraFilesNil: an ExtraFiles entry left nil is closed in the
// command, and the next keeps its number, as with os/exec, however the
// helpers' own descriptors fall.
func TestHeldExtraFilesNil(t *testing.T) {
	var g Group
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", `if { true >&3; } 2>/dev/null; then echo 3 open >&4; else echo 3 closed >&4; fi`)
	cmd.ExtraFiles = []*os.File{nil, w}
	cmd.WaitDelay = helperWaitDelay
	require.NoError(t, g.Start(cmd, Agent, ModeBackground))
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	assert.Equal(t, "3 closed\n", string(out))
	stopGroup(t, &g)
}
