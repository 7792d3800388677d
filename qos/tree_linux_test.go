//go:build linux

package qos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/qos/internal/cgocrash"
)

// runningTree opens a pidfd for each pid, which must all run, and closes
// them when the test ends.
func runningTree(t *testing.T, pids []int) []int {
	t.Helper()
	fds := make([]int, len(pids))
	for i, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		require.NoError(t, err, "pid %d must run", pid)
		t.Cleanup(func() { _ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); _ = unix.Close(fd) })
		fds[i] = fd
	}
	return fds
}

// requireGone checks that every process behind fds (named by pids) has
// exited by deadline.
func requireGone(t *testing.T, fds, pids []int, deadline time.Time, what string) {
	t.Helper()
	for i, fd := range fds {
		left := max(time.Until(deadline), 0)
		assert.True(t, exitsWithin(t, fd, left), "pid %d still runs %s (%s)", pids[i], what, describe(pids[i]))
	}
}

// requireKilled checks that every process behind fds (named by pids) has
// exited by deadline, or has SIGKILL pending by then and exits within
// killedExit after. The kill is the Group's part; a killed process exits
// once the kernel runs it, and a tree at a low tier beside other work on a
// busy machine waits for a CPU (sched(7)).
func requireKilled(t *testing.T, fds, pids []int, deadline time.Time, what string) {
	t.Helper()
	for i, fd := range fds {
		if exitsWithin(t, fd, max(time.Until(deadline), 0)) {
			continue
		}
		desc := describe(pids[i])
		if !sigkillPending(pids[i]) {
			assert.Fail(t, "not killed", "pid %d still runs %s, without SIGKILL pending (%s)", pids[i], what, desc)
			continue
		}
		assert.True(t, exitsWithin(t, fd, killedExit), "pid %d had SIGKILL pending %s but still ran %v later (%s)", pids[i], what, killedExit, desc)
	}
}

// killedExit is how long a process with SIGKILL pending may take to exit.
const killedExit = 10 * time.Second

// sigkillPending reports whether pid has SIGKILL pending, or has been
// reaped. proc_pid_status(5)'s SigPnd (the thread's) and ShdPnd (the
// process's) are hex masks in which signal n is bit n-1. The kernel sets
// SIGKILL in every thread's for a fatal signal (kernel/signal.c,
// complete_signal), and also when another thread calls exit_group(2)
// (zap_other_threads), which the tests' shells and sleeps do not.
func sigkillPending(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return true // reaped
	}
	for l := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(l, ":")
		if k != "SigPnd" && k != "ShdPnd" {
			continue
		}
		if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&(1<<(unix.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}

// describe says what pid is, for a failure message.
func describe(pid int) string {
	p, ok := readProc(pid)
	if !ok {
		return "gone"
	}
	return fmt.Sprintf("%v, state %c, parent %d, group %d, session %d", p, p.state, p.ppid, p.pgid, p.sid)
}

// TestTreeDiesWithApp: an app (this binary, re-run) starts, through a Group,
// an agent whose tree has a background job, a child that ignores SIGTERM, a
// child in a process group of its own and a daemon (a new session whose
// parent exited). However the app dies, by SIGKILL, a panic or a crash in
// C code, with no quit path run, every process of that tree must be gone
// within a second, in each mode.
func TestTreeDiesWithApp(t *testing.T) {
	for _, mode := range []Mode{ModeUtility, ModeBackground} {
		for _, how := range []string{"SIGKILL", "panic", "cgo"} {
			t.Run(string(mode)+"/"+how, func(t *testing.T) {
				if how == "cgo" && !cgocrash.Available {
					t.Skip("this test binary was built without cgo (CGO_ENABLED=0): it has no C code to crash in")
				}
				app := helperCmd("TestTreeDiesWithApp", "tree-app", "QOS_TEST_MODE="+string(mode))
				in, err := app.StdinPipe()
				require.NoError(t, err)
				out, err := app.StdoutPipe()
				require.NoError(t, err)
				var stderr strings.Builder
				app.Stderr = &stderr
				require.NoError(t, app.Start())
				t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
				line, err := bufio.NewReader(out).ReadString('\n')
				require.NoError(t, err, "the app's line; stderr: %s", &stderr)
				var keeper int
				_, err = fmt.Sscan(line, &keeper)
				require.NoError(t, err, "app said %q", line)
				pids, err := parseTreePids(strings.TrimSpace(line)[len(fmt.Sprint(keeper)):])
				require.NoError(t, err, "app said %q", line)
				fds := runningTree(t, pids.all())

				var gone time.Time
				switch how {
				case "SIGKILL":
					gone = time.Now()
					require.NoError(t, app.Process.Kill())
					_ = app.Wait()
				default:
					_, err := io.WriteString(in, strings.ToLower(how)+"\n")
					require.NoError(t, err)
					err = app.Wait()
					gone = time.Now()
					require.Error(t, err, "the app must die of its %s", how)
					assert.NotContains(t, err.Error(), "exit status 0")
				}
				requireKilled(t, fds, pids.all(), gone.Add(time.Second), "a second after the app died ("+how+")")
				t.Logf("%s: tree %v gone %v after the app", how, pids, time.Since(gone))
			})
		}
	}
}

// TestGroupStopTree: Stop reaches the whole tree (the agent's group, a
// child in another group, a daemon in another session), names what it
// had to kill (the child that ignores SIGTERM, after the agent itself
// exited on SIGTERM), and returns only when all of it is gone.
func TestGroupStopTree(t *testing.T) {
	for _, mode := range []Mode{ModeUtility, ModeBackground} {
		t.Run(string(mode), func(t *testing.T) {
			g := Group{KillAfter: 2 * time.Second}
			agent, pids := startTreeAgent(t, &g, "TestGroupStopTree", mode)
			fds := runningTree(t, pids.all())

			// The daemon's session gets an autogroup at nice 0, which the
			// holder's session watch brings to the tier within a look or
			// two (sessionPoll).
			var a Applied
			require.Eventually(t, func() bool {
				var err error
				a, err = Inspect(agent.Process.Pid)
				require.NoError(t, err)
				return len(a.OffTier) == 0
			}, 10*time.Second, 10*time.Millisecond, "nothing of the tree runs above the tier")
			assert.Equal(t, 5, a.Processes, "Inspect of the keeper reads the agent's tree, the agent and its 4 children: %s", a)
			_, nice, err := autogroup(pids.Daemon)
			require.NoError(t, err)
			assert.Equal(t, settingFor(Agent, mode).nice, nice, "the daemon's own autogroup")

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = g.Stop(ctx)
			require.ErrorIs(t, err, ErrKilled, "the child that ignores SIGTERM had to be killed")
			assert.Contains(t, err.Error(), fmt.Sprintf("pid %d (sleep)", pids.Stubborn), "the report names it")
			assert.NotContains(t, err.Error(), fmt.Sprintf("pid %d ", pids.Agent), "the agent exited on SIGTERM")
			requireGone(t, fds, pids.all(), time.Now(), "when Stop returned")
			waitErr := agent.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, waitErr, &ee)
			assert.Equal(t, syscall.SIGTERM, ee.Sys().(syscall.WaitStatus).Signal(), "the command's own end: %v", waitErr)
		})
	}
}

// TestHolderKilled: SIGKILL of the holder (a user's kill -9, the OOM
// killer's choice) must not free the tree it held: the keeper, a
// subreaper too, gets the orphans and kills them. Every process of a tree
// with a background job, a child in its own process group and a
// double-forked setsid daemon is gone within a second, and cmd.Wait
// returns.
func TestHolderKilled(t *testing.T) {
	g := Group{}
	agent, pids := startTreeAgent(t, &g, "TestHolderKilled", ModeUtility)
	fds := runningTree(t, pids.all())
	holder, _, ok := heldBy(agent.Process.Pid)
	require.True(t, ok, "the agent is held")

	require.NoError(t, unix.Kill(holder, unix.SIGKILL))
	killed := time.Now()
	requireKilled(t, fds, pids.all(), killed.Add(time.Second), "a second after the holder was SIGKILLed")
	waited := make(chan error, 1)
	go func() { waited <- agent.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal(), "the keeper ends as the holder did: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("cmd.Wait did not return 5 s after the holder was SIGKILLed")
	}
	t.Logf("tree %v gone %v after the holder was killed", pids, time.Since(killed))
}

// refuser is a signaller that refuses the pids in it as the kernel refuses
// a process of another user's (EPERM). A test cannot make a process
// unkillable for root, so the refusal is the kernel's word faked, and
// everything else is real.
type refuser map[int]bool

func (r refuser) send(fd pidfd, p proc, sig unix.Signal) error {
	if r[p.pid] {
		return unix.EPERM
	}
	return sendSignal(fd, p, sig)
}

// TestKillTreeRefused: killTree ends when a process of the tree refuses
// SIGKILL, reports it as refused and kills the rest.
func TestKillTreeRefused(t *testing.T) {
	sh := exec.Command("/bin/sh", "-c", "sleep 1000 & echo $!; sleep 1000 & echo $!; wait")
	out, err := sh.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, sh.Start())
	t.Cleanup(func() { _ = sh.Process.Kill(); _ = sh.Wait() })
	r := bufio.NewReader(out)
	var sleeps [2]int
	for i := range sleeps {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		_, err = fmt.Sscan(line, &sleeps[i])
		require.NoError(t, err, "sh said %q", line)
	}
	fds := runningTree(t, sleeps[:])
	refused := refuser{sleeps[0]: true}

	type result struct{ killed, refused []proc }
	done := make(chan result, 1)
	go func() {
		killed, refused, err := killTree(sh.Process.Pid, nil, refused.send)
		assert.NoError(t, err)
		done <- result{killed, refused}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("killTree still runs 10 s after a process refused SIGKILL (%s)", describe(sleeps[0]))
	}
	require.Len(t, res.refused, 1, "refused: %v", res.refused)
	assert.Equal(t, sleeps[0], res.refused[0].pid, "the refused process is reported")
	var killed []int
	for _, p := range res.killed {
		killed = append(killed, p.pid)
	}
	assert.Equal(t, []int{sleeps[1]}, killed, "the other is killed")
	assert.True(t, exitsWithin(t, fds[1], time.Second), "the other sleep is gone (%s)", describe(sleeps[1]))
}

// TestGroupStopRefused: a process of the tree that ignores SIGTERM and
// refuses SIGKILL (EPERM) is named as such, not as killed; Stop returns
// at once rather than at its context's end, and lets the tree go, so the
// helpers exit and cmd.Wait returns.
func TestGroupStopRefused(t *testing.T) {
	g := Group{KillAfter: 200 * time.Millisecond}
	refused := refuser{}
	g.sys.send = refused.send
	agent, pids := startTreeAgent(t, &g, "TestGroupStopRefused", ModeUtility)
	runningTree(t, pids.all())
	refused[pids.Stubborn] = true

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := g.Stop(ctx)
	require.ErrorIs(t, err, fs.ErrPermission, "the stubborn child refused SIGKILL")
	assert.NotErrorIs(t, err, context.DeadlineExceeded, "Stop does not wait for it")
	assert.Contains(t, err.Error(), fmt.Sprintf("could not be killed (EPERM: another user's, as after sudo) and still run: pid %d (sleep)", pids.Stubborn))
	assert.NotErrorIs(t, err, ErrKilled, "nothing else had to be killed: %v", err)
	assert.NoError(t, ctx.Err(), "Stop returned before its context ended")

	waited := make(chan error, 1)
	go func() { waited <- agent.Wait() }()
	select {
	case err := <-waited:
		t.Logf("cmd.Wait: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("cmd.Wait did not return 10 s after Stop let the tree go")
	}
}

// TestInspectAfterAgentExit: once the command itself has exited while a
// process it started runs on, Inspect of its keeper reports that tree.
func TestInspectAfterAgentExit(t *testing.T) {
	var g Group
	// The shell waits for its stdin to close before it exits, so that it
	// is still the held command when heldBy reads it (a shell that exited
	// first would leave heldBy the sleep; seen in the CI VM as nobody).
	agent := exec.Command("/bin/sh", "-c", "sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; read line")
	out, err := agent.StdoutPipe()
	require.NoError(t, err)
	in, err := agent.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(agent, Agent, ModeUtility))
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	_, sh, ok := heldBy(agent.Process.Pid)
	require.True(t, ok, "the agent is held")
	shFd := runningTree(t, []int{sh})
	require.NoError(t, in.Close()) // the shell may exit now
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	var sleep int
	_, err = fmt.Sscan(line, &sleep)
	require.NoError(t, err, "sh said %q", line)
	runningTree(t, []int{sleep})
	require.True(t, exitsWithin(t, shFd[0], 10*time.Second), "the agent's shell exits (%s)", describe(sh))
	require.Eventually(t, func() bool { _, ok := readProc(sh); return !ok }, 10*time.Second, 5*time.Millisecond,
		"the holder reaps the agent's shell")

	a, err := Inspect(agent.Process.Pid)
	require.NoError(t, err, "Inspect of the keeper after the agent exited")
	assert.Equal(t, 1, a.Processes, "the sleep the agent left runs on: %s", a)
	assert.Equal(t, "SCHED_OTHER", a.Policy, "read from the sleep: %s", a)
	assert.Equal(t, settingFor(Agent, ModeUtility).nice, a.Nice, "the sleep runs at the tier: %s", a)
}

// TestGroupStartNotHeld: a command in a new PID namespace, or as another
// user, starts directly (its cmd.Process is the command, not a keeper),
// since the helpers would misreport its pid or run as that user; the Group
// says so.
func TestGroupStartNotHeld(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a new PID namespace and another user's credentials need root (CAP_SYS_ADMIN, CAP_SETUID); CI's root pass runs this")
	}
	for name, attr := range map[string]*syscall.SysProcAttr{
		"CLONE_NEWPID": {Cloneflags: unix.CLONE_NEWPID},
		"Unshareflags": {Unshareflags: unix.CLONE_NEWPID},
		"Credential":   {Credential: &syscall.Credential{Uid: 65534, Gid: 65534}},
	} {
		t.Run(name, func(t *testing.T) {
			var told []error
			g := Group{OnError: func(err error) { told = append(told, err) }}
			cmd := exec.Command("/bin/sh", "-c", "echo $$; exec sleep 1000")
			cmd.SysProcAttr = attr
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, g.Start(cmd, Agent, ModeUtility))
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)
			_, _, held := heldBy(cmd.Process.Pid)
			assert.False(t, held, "not held")
			p, ok := readProc(cmd.Process.Pid)
			require.True(t, ok)
			assert.NotEqual(t, "qos-keeper", p.comm, "cmd.Process is the command itself (said %q)", line)
			require.Len(t, told, 1, "the Group says the command is not held")
			assert.ErrorContains(t, told[0], "not held", "and why")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := g.Stop(ctx); err != nil {
				// A namespace's init ignores SIGTERM without a handler
				// (pid_namespaces(7)).
				require.ErrorIs(t, err, ErrKilled)
			}
		})
	}
}

// startTreeAgent starts the tree-agent helper (see treePids) through g in
// mode m and returns it and its tree's pids, once the agent has printed
// them. Its stdin stays open: the agent ends when it closes.
func startTreeAgent(t *testing.T, g *Group, test string, m Mode) (*exec.Cmd, treePids) {
	t.Helper()
	agent := helperCmd(test, "tree-agent")
	out, err := agent.StdoutPipe()
	require.NoError(t, err)
	_, err = agent.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(agent, Agent, m))
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	pids, err := parseTreePids(line)
	require.NoError(t, err, "agent said %q", line)
	return agent, pids
}
