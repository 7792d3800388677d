//go:build linux

package qos

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/flush"
)

func init() {
	helpers["group-app"] = groupAppHelper
	helpers["polite"] = politeHelper
}

// politeHelper notes its SIGTERM in groupDirEnv's polite file and exits 0.
func politeHelper() int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Println("ready")
	<-term
	if err := os.WriteFile(filepath.Join(os.Getenv(groupDirEnv), "polite"), []byte("term\n"), 0o644); err != nil {
		return 1
	}
	return 0
}

const groupDirEnv = "QOS_TEST_GROUP_DIR" // where the agents note a SIGTERM

// groupAgents returns the three kinds of agent a Group stops: one in a
// session of its own that notes its SIGTERM in dir and exits (this binary,
// whose signal handler is set before it says ready: a shell's trap would
// leave the window of its background child's fork), one in a process group
// of its own that ignores SIGTERM (and so does the sleep it waits for), and
// one without a group of its own.
func groupAgents(dir string) (polite, stubborn, plain *exec.Cmd) {
	polite = helperCmd("TestGroupStop", "polite", groupDirEnv+"="+dir)
	polite.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stubborn = exec.Command("/bin/sh", "-c", `trap '' TERM; echo ready; sleep 60; true`)
	stubborn.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	plain = exec.Command("/bin/sleep", "60")
	return polite, stubborn, plain
}

// startReady starts cmd through g and, for a shell, waits for its "ready":
// its trap is set.
func startReady(g *Group, cmd *exec.Cmd) error {
	var out io.Reader
	if cmd.Path == "/bin/sh" || len(cmd.Args) > 1 && strings.HasPrefix(cmd.Args[1], "-test.run") {
		r, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		out = r
	}
	if err := g.Start(cmd, Agent, ModeUtility); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		return fmt.Errorf("%s said %q: %v", cmd, line, err)
	}
	return nil
}

func TestGroupStop(t *testing.T) {
	dir := t.TempDir()
	g := Group{KillAfter: 2 * time.Second}
	polite, stubborn, plain := groupAgents(dir)
	shared := polite.SysProcAttr
	for _, cmd := range []*exec.Cmd{polite, stubborn, plain} {
		require.NoError(t, startReady(&g, cmd))
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	assert.Same(t, shared, polite.SysProcAttr, "the caller's SysProcAttr is put back")
	assert.Equal(t, syscall.SysProcAttr{Setsid: true}, *shared, "and stays as it was")
	assert.Nil(t, plain.SysProcAttr, "a command without one keeps none")

	_, shell, ok := heldBy(stubborn.Process.Pid)
	require.True(t, ok, "the stubborn agent is held")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := g.Stop(ctx)
	require.ErrorIs(t, err, ErrKilled, "the stubborn agent had to be killed")
	assert.Contains(t, err.Error(), " still ran 2s after SIGTERM and were killed: ")
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d (sh)", shell), "the stubborn agent's shell is named")
	for _, cmd := range []*exec.Cmd{polite, stubborn, plain} {
		_ = cmd.Wait()
	}
	assert.True(t, polite.ProcessState.Success(), "polite: got %v, want exit 0 from its SIGTERM trap", polite.ProcessState)
	assert.Equal(t, syscall.SIGKILL, signalOf(stubborn), "stubborn: got %v, want SIGKILL", stubborn.ProcessState)
	assert.Equal(t, syscall.SIGTERM, signalOf(plain), "plain: got %v, want SIGTERM", plain.ProcessState)
	b, err := os.ReadFile(filepath.Join(dir, "polite"))
	require.NoError(t, err, "the polite agent's trap must have run")
	assert.Equal(t, "term\n", string(b))

	late := exec.Command("/bin/true")
	assert.ErrorIs(t, g.Start(late, Agent, ModeUtility), ErrGroupStopped)
	assert.Nil(t, late.Process, "nothing starts after Stop")
	assert.NoError(t, g.Stop(ctx), "a second Stop has nothing left to stop")
}

func signalOf(cmd *exec.Cmd) syscall.Signal {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

// TestGroupStopError: the error of a Stop that gave up names the commands
// still running on one line and wraps the context's error.
func TestGroupStopError(t *testing.T) {
	var g Group
	cmd := exec.Command("/bin/sleep", "60")
	require.NoError(t, g.Start(cmd, Agent, ModeOff))
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	err := g.pruned(nil, nil, context.DeadlineExceeded)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	want := fmt.Sprintf("qos: stop: 1 commands still running after SIGKILL (pids [%d]): context deadline exceeded", cmd.Process.Pid)
	assert.Equal(t, want, err.Error())
	assert.NotContains(t, err.Error(), "\n")
}

// TestQuitStopsGroupOnSIGTERM: an app (a helper process) with its agents in
// a Group and group.Stop in its flush hook gets SIGTERM through
// flush.Hook.Notify: the hook must stop every agent before the app exits,
// each in the way it allows (SIGTERM, or SIGKILL after KillAfter), and its
// report name what had to be killed.
func TestQuitStopsGroupOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	app := helperCmd("TestQuitStopsGroupOnSIGTERM", "group-app", groupDirEnv+"="+dir)
	in, err := app.StdinPipe()
	require.NoError(t, err)
	defer in.Close()
	out, err := app.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	app.Stderr = &stderr
	require.NoError(t, app.Start())
	t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the app's line of agent pids; stderr: %s", &stderr)
	var fds []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err, "app said %q", line)
		fd, err := unix.PidfdOpen(pid, 0)
		require.NoError(t, err, "agent %d must run while the app does", pid)
		t.Cleanup(func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); _ = unix.Close(fd) })
		fds = append(fds, fd)
	}
	require.Len(t, fds, 3, "app said %q", line)

	require.NoError(t, app.Process.Signal(syscall.SIGTERM))
	err = app.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "app: got %v, want an exit status; stderr: %s", err, &stderr)
	assert.Equal(t, 143, ee.ExitCode(), "exit status; stderr: %s", &stderr)
	assert.Contains(t, stderr.String(), "flush: terminated: saved 0/0, stopped 0/1 in ", "the hook's report; stderr: %s", &stderr)
	assert.Contains(t, stderr.String(), " still ran 2s after SIGTERM and were killed: pid ",
		"group.Stop names what it had to kill: the stubborn agent's shell (and its sleep, if it had started)")
	assert.Contains(t, stderr.String(), " (sh)", "the stubborn agent's shell is named")
	b, err := os.ReadFile(filepath.Join(dir, "polite"))
	require.NoError(t, err, "the polite agent got SIGTERM, not the parent-death SIGKILL")
	assert.Equal(t, "term\n", string(b))
	for _, fd := range fds {
		assert.True(t, exitsWithin(t, fd, 0), "every agent is gone once the app has exited")
	}
}

// groupAppHelper is an app that starts its agents in a Group whose Stop is
// in its flush hook, prints their pids and waits for a signal.
func groupAppHelper() int {
	g := &Group{KillAfter: 2 * time.Second}
	hook := flush.New(flush.Options{Timeout: 10 * time.Second})
	hook.AddStop("agents", flush.Func(g.Stop))
	hook.Notify()
	polite, stubborn, plain := groupAgents(os.Getenv(groupDirEnv))
	var pids []string
	for _, cmd := range []*exec.Cmd{polite, stubborn, plain} {
		if err := startReady(g, cmd); err != nil {
			fmt.Println(err)
			return 1
		}
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
	}
	fmt.Println(strings.Join(pids, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func init() { helpers["readme-app"] = readmeAppHelper }

// TestReadmeLineStopsChildren: the README's line, a command with no
// SysProcAttr through a Group (agents.Start(exec.Command(host, args...),
// qos.Agent, mode)), in an app that quits cleanly through its flush hook:
// the children the command started in the background must be gone when
// the app has quit, with and without qos.Main in the app's main.
func TestReadmeLineStopsChildren(t *testing.T) {
	for _, tc := range []struct {
		name, unhooked string
	}{{"with Main", ""}, {"without Main", "1"}} {
		t.Run(tc.name, func(t *testing.T) {
			app := helperCmd("TestReadmeLineStopsChildren", "readme-app", "QOS_TEST_UNHOOKED="+tc.unhooked)
			_, err := app.StdinPipe()
			require.NoError(t, err)
			out, err := app.StdoutPipe()
			require.NoError(t, err)
			var stderr bytes.Buffer
			app.Stderr = &stderr
			require.NoError(t, app.Start())
			t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err, "stderr: %s", &stderr)
			var pids []int
			for _, f := range strings.Fields(line) {
				pid, err := strconv.Atoi(f)
				require.NoError(t, err, "app said %q", line)
				pids = append(pids, pid)
			}
			require.Len(t, pids, 2, "app said %q", line)
			fds := runningTree(t, pids)
			require.NoError(t, app.Process.Signal(syscall.SIGTERM))
			_ = app.Wait()
			assert.Contains(t, stderr.String(), "flush: terminated: saved 0/0, stopped 1/1 in ", "a clean quit")
			requireGone(t, fds, pids, time.Now(), "once the app quit cleanly (yes, sleep)")
		})
	}
}

// readmeAppHelper is an app with the README's qos lines: its agent, a
// shell that starts yes and sleep in the background, goes through a Group
// whose Stop is in the flush hook.
func readmeAppHelper() int {
	if os.Getenv("QOS_TEST_UNHOOKED") == "1" {
		hooked.Store(false) // as if main did not call Main
	}
	var agents Group
	hook := flush.New(flush.Options{Timeout: 10 * time.Second})
	hook.AddStop("agents", flush.Func(agents.Stop))
	hook.Notify()
	host := exec.Command("/bin/sh", "-c", "yes >/dev/null & a=$!; sleep 1000 & echo $a $!; wait")
	out, _ := host.StdoutPipe()
	if err := agents.Start(host, Agent, ModeUtility); err != nil {
		fmt.Println(err)
		return 1
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	fmt.Print(line)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// unhooked runs the rest of the test as in an app whose main does not call
// Main: Group starts its commands without the helpers.
func unhooked(t *testing.T) {
	hooked.Store(false)
	t.Cleanup(func() { hooked.Store(true) })
}

// TestGroupWithoutMain: in an app that does not call Main, Stop still
// reaches the command's process group and the descendants it sees, and
// kills what ignores SIGTERM after the command itself exited on it; a
// command started in mode off from inside Do lives on after Do (its
// parent-death signal comes from a kept thread).
func TestGroupWithoutMain(t *testing.T) {
	unhooked(t)
	t.Run("stop", func(t *testing.T) {
		g := Group{KillAfter: 2 * time.Second}
		cmd := exec.Command("/bin/sh", "-c", `(trap '' TERM; echo ready; exec sleep 1000) & read x`)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		_, err = cmd.StdinPipe()
		require.NoError(t, err)
		require.NoError(t, g.Start(cmd, Agent, ModeUtility))
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		_, err = bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err)
		tree, _ := (&plainMember{cmd: cmd, group: true}).tree()
		var pids []int
		stubborn := 0
		for _, p := range tree {
			pids = append(pids, p.pid)
			if p.pid != cmd.Process.Pid {
				stubborn = p.pid
			}
		}
		require.Len(t, pids, 2, "the shell and its subshell")
		fds := runningTree(t, pids)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err = g.Stop(ctx)
		require.ErrorIs(t, err, ErrKilled)
		assert.Contains(t, err.Error(), fmt.Sprintf("pid %d (", stubborn), "the subshell that ignores SIGTERM is named")
		assert.NotContains(t, err.Error(), fmt.Sprintf("pid %d (", cmd.Process.Pid), "the command exited on SIGTERM")
		requireGone(t, fds, pids, time.Now(), "when Stop returned")
	})
	t.Run("mode off inside Do", func(t *testing.T) {
		var g Group
		cmd := exec.Command("/bin/cat")
		in, err := cmd.StdinPipe()
		require.NoError(t, err)
		var tid int
		require.NoError(t, Do(Background, ModeUtility, func() {
			tid = unix.Gettid()
			require.NoError(t, g.Start(cmd, Agent, ModeOff))
		}))
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitThreadExit(t, tid)
		require.NoError(t, in.Close())
		assert.NoError(t, cmd.Wait(), "it exits 0 at the end of its input, not killed when Do's thread ended")
	})
}

// TestGroupWithoutMainSays: in an app whose main does not call Main, each
// Group says so at its first Start, once, through its OnError (nil: to
// slog.Default), rather than quietly holding less; so does a Start whose
// command cannot be held.
func TestGroupWithoutMainSays(t *testing.T) {
	unhooked(t)
	for i := range 2 {
		var got []error
		g := Group{OnError: func(err error) { got = append(got, err) }}
		for range 2 {
			cmd := exec.Command("/bin/true")
			require.NoError(t, g.Start(cmd, Agent, ModeUtility))
			require.NoError(t, cmd.Wait())
		}
		require.Len(t, got, 1, "Group %d: one notice at its first Start: %v", i, got)
		assert.ErrorContains(t, got[0], "qos.Main", "Group %d", i)
		assert.ErrorContains(t, got[0], "not held", "Group %d", i)
	}
	t.Run("slog.Default", func(t *testing.T) {
		var got []error
		// slog.SetDefault also points the log package's output at the
		// handler, and setting the old default again does not undo that.
		old, out, flags := slog.Default(), log.Writer(), log.Flags()
		slog.SetDefault(slog.New(errHandler(func(err error) { got = append(got, err) })))
		t.Cleanup(func() { slog.SetDefault(old); log.SetOutput(out); log.SetFlags(flags) })
		var g Group
		cmd := exec.Command("/bin/true")
		require.NoError(t, g.Start(cmd, Agent, ModeUtility))
		require.NoError(t, cmd.Wait())
		require.Len(t, got, 1, "one notice, logged: %v", got)
		assert.ErrorContains(t, got[0], "qos.Main")
	})
}
