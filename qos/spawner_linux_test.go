//go:build linux

package qos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	helpers["pdeath-app"] = pdeathAppHelper
}

// TestPdeathsigChildLivesWhileAppDoes starts commands with Pdeathsig in
// parallel, at the Agent tier, while other Starts and Do retire their
// threads: each must run lowered to the tier and live until its stdin
// closes (a child killed by its parent-death signal exits with "signal:
// killed"), and once all have exited no lowered thread may stay behind.
func TestPdeathsigChildLivesWhileAppDoes(t *testing.T) {
	b := base(t)
	for _, tc := range []struct {
		mode Mode
		want string
	}{
		{ModeUtility, fmt.Sprintf("nice %d SCHED_OTHER io best-effort/7", utilityNice)},
		{ModeBackground, "nice 19 SCHED_IDLE io idle/0"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			const n = 4
			cmds := make([]*exec.Cmd, n)
			ins := make([]io.WriteCloser, n)
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				cmds[i] = exec.Command("/bin/cat")
				cmds[i].SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
				in, err := cmds[i].StdinPipe()
				require.NoError(t, err)
				ins[i] = in
				wg.Go(func() { errs[i] = Start(cmds[i], Agent, tc.mode) })
			}
			wg.Wait()
			for i := range n {
				require.NoError(t, errs[i], "Start %d", i)
				t.Cleanup(func() { _ = cmds[i].Process.Kill(); _ = cmds[i].Wait() })
			}
			churn(t) // threads retired after the Pdeathsig children started
			waitFollowUps(t)
			for _, cmd := range cmds {
				a, err := Inspect(cmd.Process.Pid)
				require.NoError(t, err)
				assert.Equal(t, tc.want, threadLine(a), "child: got %s, want %s", threadLine(a), tc.want)
			}
			for i, cmd := range cmds {
				require.NoError(t, ins[i].Close())
				assert.NoError(t, cmd.Wait(), "a Pdeathsig child must live until the app dies: it exits 0 at EOF")
			}
			requireNoLoweredThread(t, b)
		})
	}
}

// churn retires a few lowered threads, as Starts without Pdeathsig and Do
// calls do.
func churn(t *testing.T) {
	t.Helper()
	for range 3 {
		cmd := exec.Command("/bin/true")
		require.NoError(t, Start(cmd, Agent, ModeUtility))
		require.NoError(t, cmd.Wait())
		require.NoError(t, Do(Background, ModeBackground, func() {}))
	}
}

// TestAgentsDieWhenAppIsKilled: an app (a helper process) starts agents
// through Start with Pdeathsig and through a Group, then gets SIGKILL,
// which leaves it no quit path to run. Its agents must go with it.
func TestAgentsDieWhenAppIsKilled(t *testing.T) {
	app := helperCmd("TestAgentsDieWhenAppIsKilled", "pdeath-app")
	in, err := app.StdinPipe()
	require.NoError(t, err)
	defer in.Close()
	out, err := app.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, app.Start())
	t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the app's line of agent pids")
	fds := make(map[int]int) // pid → pidfd
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err, "app said %q", line)
		fd, err := unix.PidfdOpen(pid, 0)
		require.NoError(t, err, "agent %d must run while the app does", pid)
		t.Cleanup(func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); _ = unix.Close(fd) })
		fds[pid] = fd
		a, err := Inspect(pid)
		require.NoError(t, err)
		assert.Equal(t, utilityNice, a.Nice, "agent %d nice: got %d, want %d", pid, a.Nice, utilityNice)
	}
	require.Len(t, fds, 3, "app said %q", line)

	start := time.Now()
	require.NoError(t, app.Process.Kill())
	_ = app.Wait()
	for pid, fd := range fds {
		assert.True(t, exitsWithin(t, fd, 10*time.Second), "agent %d still runs 10 s after the app was killed", pid)
	}
	t.Logf("agents gone %v after the app's SIGKILL", time.Since(start))
}

// exitsWithin reports whether the process behind pidfd fd exits within d.
func exitsWithin(t *testing.T, fd int, d time.Duration) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		require.NoError(t, err)
		return n == 1
	}
}

// pdeathAppHelper starts three agents that would run for a minute: one
// through Start with Pdeathsig, one through a Group, one through a Group in
// a session of its own. It prints their own pids on one line and waits for
// stdin to close, or for its death.
func pdeathAppHelper() int {
	var g Group
	plain := exec.Command("/bin/sleep", "60")
	plain.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	grouped := exec.Command("/bin/sleep", "60")
	session := exec.Command("/bin/sleep", "60")
	session.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	for _, start := range []func() error{
		func() error { return Start(plain, Agent, ModeUtility) },
		func() error { return g.Start(grouped, Agent, ModeUtility) },
		func() error { return g.Start(session, Agent, ModeUtility) },
	} {
		if err := start(); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	var pids []any
	for _, cmd := range []*exec.Cmd{plain, grouped, session} {
		a, err := Inspect(cmd.Process.Pid) // a held command's own pid: cmd.Process is its keeper
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

// TestPdeathsigModeOffInsideDo: a command with Pdeathsig started in mode
// off from inside Do, whose thread is retired when fn returns (the mode is
// chosen per call, so a housekeeping pass may start an agent whose profile
// says off). The parent-death signal follows the forking thread, so the
// command must be forked from a kept thread in mode off too, and live on
// after Do returned until its stdin closes.
func TestPdeathsigModeOffInsideDo(t *testing.T) {
	cmd := exec.Command("/bin/cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var tid int
	require.NoError(t, Do(Background, ModeUtility, func() {
		tid = unix.Gettid()
		require.NoError(t, Start(cmd, Agent, ModeOff))
	}))
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitThreadExit(t, tid) // Do's thread is gone: a child forked from it has had its signal
	require.NoError(t, in.Close())
	assert.NoError(t, cmd.Wait(), "it exits 0 at the end of its input, not killed by its parent-death signal")
}
