//go:build linux

package qos

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestStartChildAndGrandchild(t *testing.T) {
	b := base(t)
	t.Cleanup(func() { restoreOwnAutogroup(t, b.AutogroupNice) })
	tests := []struct {
		mode Mode
		want string // threadLine of child and grandchild; "" means unchanged
	}{
		{ModeUtility, fmt.Sprintf("nice %d SCHED_OTHER io best-effort/7", utilityNice)},
		{ModeBackground, "nice 19 SCHED_IDLE io idle/0"},
		{ModeOff, ""},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = threadLine(b)
			}
			child, grandchild := shellTree(t, func(c *exec.Cmd) error { return Start(c, Agent, tc.mode) })
			assert.Equal(t, want, threadLine(child), "child: got %s, want %s", threadLine(child), want)
			assert.Equal(t, want, threadLine(grandchild), "grandchild: got %s, want %s", threadLine(grandchild), want)
			// Not in a new session: the child shares the app's autogroup, and
			// Start must leave the app's own autogroup nice alone.
			own, ownNice, err := autogroup(os.Getpid())
			require.NoError(t, err)
			assert.Equal(t, own, child.Autogroup, "child autogroup: got %q, want the app's %q", child.Autogroup, own)
			assert.Equal(t, b.AutogroupNice, ownNice, "app autogroup nice: got %d, want %d", ownNice, b.AutogroupNice)
		})
	}
}

// restoreOwnAutogroup puts this process's autogroup nice back to nice if a
// failing Start changed it, so one failure does not slow what else runs in
// the session (raising it needs root, which the CI machine has).
func restoreOwnAutogroup(t *testing.T, nice int) {
	if _, n, err := autogroup(os.Getpid()); err == nil && n != nice {
		t.Logf("restoring this process's autogroup nice from %d to %d: %v", n, nice, writeFile("/proc/self/autogroup", strconv.Itoa(nice)))
	}
}

func TestStartTiers(t *testing.T) {
	tests := []struct {
		tier Tier
		mode Mode
		want string
	}{
		{Serving, ModeUtility, "nice 0 SCHED_OTHER io best-effort/7"},
		{Serving, ModeBackground, "nice 0 SCHED_OTHER io best-effort/7"},
		{Background, ModeUtility, "nice 19 SCHED_OTHER io idle/0"},
		{Background, ModeBackground, "nice 19 SCHED_IDLE io idle/0"},
	}
	for _, tc := range tests {
		t.Run(tierNames[tc.tier]+"/"+string(tc.mode), func(t *testing.T) {
			child, _ := shellTree(t, func(c *exec.Cmd) error { return Start(c, tc.tier, tc.mode) })
			assert.Equal(t, tc.want, threadLine(child), "got %s, want %s", threadLine(child), tc.want)
		})
	}
}

func TestStartSetsidAutogroup(t *testing.T) {
	if b, err := os.ReadFile(autogroupSysctl); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skipf("%s is not 1 (%q, %v): the kernel makes no autogroups to correct", autogroupSysctl, b, err)
	}
	own, ownNice, err := autogroup(os.Getpid())
	require.NoError(t, err)
	t.Cleanup(func() { restoreOwnAutogroup(t, ownNice) })
	for _, tc := range []struct {
		mode Mode
		nice int
	}{{ModeUtility, utilityNice}, {ModeBackground, 19}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", "read stop")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			require.NoError(t, Start(cmd, Agent, tc.mode))
			defer func() { _ = in.Close(); _ = cmd.Wait() }()
			waitFollowUps(t)
			a, err := Inspect(cmd.Process.Pid)
			require.NoError(t, err)
			assert.NotEqual(t, own, a.Autogroup, "a Setsid child should have an autogroup of its own")
			assert.False(t, a.AppAutogroup, "a Setsid child is not in the app's autogroup")
			assert.Contains(t, a.String(), fmt.Sprintf("own autogroup %s at nice %d", a.Autogroup, tc.nice))
			assert.Equal(t, tc.nice, a.AutogroupNice, "child autogroup nice: got %d, want %d", a.AutogroupNice, tc.nice)
			_, n, err := autogroup(os.Getpid())
			require.NoError(t, err)
			assert.Equal(t, ownNice, n, "app autogroup nice: got %d, want %d", n, ownNice)
		})
	}
}

func TestStartRefusesPtrace(t *testing.T) {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	err := Start(cmd, Agent, ModeUtility)
	assert.ErrorContains(t, err, "SysProcAttr.Ptrace is tied to the starting thread")
	assert.Nil(t, cmd.Process, "a refused command must not start")
	var g Group
	err = g.Start(cmd, Agent, ModeUtility)
	assert.ErrorContains(t, err, "SysProcAttr.Ptrace is tied to the starting thread", "held or not")
	assert.Nil(t, cmd.Process, "a refused command must not start")
	t.Run("mode off starts it", func(t *testing.T) {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		require.NoError(t, Start(cmd, Agent, ModeOff))
		assert.NoError(t, cmd.Wait(), "with mode off the calling thread lives on, so Pdeathsig does not fire")
	})
}

func TestStartError(t *testing.T) {
	cmd := exec.Command("/nonexistent/agent")
	err := Start(cmd, Agent, ModeUtility)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Nil(t, cmd.Process)
	requireNoLoweredThread(t, base(t))
}

// TestThreadsStayUnlowered checks that after many Starts and Dos, some
// concurrent, no thread of the test process is lowered, and that threads the
// runtime makes afterwards are not either (they come from its template
// thread, not from a lowered one).
func TestThreadsStayUnlowered(t *testing.T) {
	b := base(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 8 {
				cmd := exec.Command("/bin/true")
				mode := []Mode{ModeUtility, ModeBackground}[(g+i)%2]
				if assert.NoError(t, Start(cmd, Agent, mode)) {
					assert.NoError(t, cmd.Wait())
				}
				assert.NoError(t, Do(Background, mode, func() {}))
				assert.NoError(t, Do(Agent, ModeUtility, func() {}))
			}
		})
	}
	wg.Wait()
	requireNoLoweredThread(t, b)

	before := threadStates(t)
	release := make(chan struct{})
	tids := lockThreads(len(before)+4, release)
	defer close(release)
	fresh := 0
	for _, tid := range tids {
		a, err := inspectThread(os.Getpid(), tid)
		require.NoError(t, err)
		assert.Equal(t, threadLine(b), threadLine(a), "thread %d: got %s, want %s", tid, threadLine(a), threadLine(b))
		if _, ok := before[tid]; !ok {
			fresh++
		}
	}
	assert.Positive(t, fresh, "locking more goroutines than there were threads should have made new threads")
}

func TestDo(t *testing.T) {
	b := base(t)
	tests := []struct {
		tier Tier
		mode Mode
		want string // "" means unchanged
	}{
		{Background, ModeUtility, "nice 19 SCHED_OTHER io idle/0"},
		{Background, ModeBackground, "nice 19 SCHED_IDLE io idle/0"},
		{Agent, ModeUtility, fmt.Sprintf("nice %d SCHED_OTHER io best-effort/7", utilityNice)},
		{Serving, ModeUtility, "nice 0 SCHED_OTHER io best-effort/7"},
		{Background, ModeOff, ""},
	}
	for _, tc := range tests {
		t.Run(tierNames[tc.tier]+"/"+string(tc.mode), func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = threadLine(b)
			}
			var (
				runs int
				got  Applied
				err  error
			)
			require.NoError(t, Do(tc.tier, tc.mode, func() {
				runs++
				got, err = inspectThread(os.Getpid(), unix.Gettid())
			}))
			require.NoError(t, err)
			assert.Equal(t, 1, runs, "fn ran %d times, want once", runs)
			assert.Equal(t, want, threadLine(got), "fn's thread: got %s, want %s", threadLine(got), want)
			requireNoLoweredThread(t, b)
		})
	}
}

func TestDoPanic(t *testing.T) {
	b := base(t)
	assert.PanicsWithValue(t, "boom", func() {
		_ = Do(Background, ModeBackground, func() { panic("boom") })
	}, "a panic in fn should reach the caller of Do")
	requireNoLoweredThread(t, b)
}

func TestEnterServing(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		want string
	}{
		{ModeUtility, "nice 0 SCHED_OTHER io best-effort/7"},
		{ModeOff, threadLine(base(t))},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			cmd := helperCmd("TestEnterServing", "serving", "QOS_TEST_MODE="+string(tc.mode))
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			defer func() { _ = in.Close(); _ = cmd.Wait() }()
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)
			pid := cmd.Process.Pid
			tids, err := tasks(pid)
			require.NoError(t, err)
			require.Greater(t, len(tids), 8, "the helper holds 8 locked threads besides the runtime's")
			for _, tid := range tids {
				a, err := inspectThread(pid, tid)
				require.NoError(t, err)
				assert.Equal(t, tc.want, threadLine(a), "thread %d: got %s, want %s", tid, threadLine(a), tc.want)
			}
		})
	}
}

func TestMainThread(t *testing.T) {
	b := threadLine(base(t))
	for _, tc := range []struct {
		helper string
		hops   bool // whether calls must have moved off the main thread
	}{
		{"mainthread-locked", false}, // TestMain's goroutine keeps the main thread
		{"mainthread-hop", true},     // it lets go, and Start's goroutine lands there
	} {
		t.Run(tc.helper, func(t *testing.T) {
			out, err := helperCmd("TestMainThread", tc.helper, "GOMAXPROCS=1").CombinedOutput()
			require.NoError(t, err, "helper output:\n%s", out)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Len(t, lines, 3, "helper output:\n%s", out)
			before, after := strings.TrimPrefix(lines[0], "before="), strings.TrimPrefix(lines[1], "after=")
			assert.Equal(t, b, before, "main thread before the calls: got %s, want %s", before, b)
			assert.Equal(t, before, after, "main thread after the calls: got %s, want %s", after, before)
			if tc.hops {
				assert.NotEqual(t, "hops=0", lines[2], "the calls should have landed on the main thread and moved off it")
			} else {
				assert.Equal(t, "hops=0", lines[2], "the main goroutine holds the main thread")
			}
		})
	}
}

func TestEnvForwarding(t *testing.T) {
	t.Setenv(EnvVar, "background")
	m, _, err := ResolveMode(os.Getenv(EnvVar))
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		forward bool
		want    string
	}{{"with EnvVar", true, "background <nil>\n"}, {"without", false, "utility <nil>\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := helperCmd("TestEnvForwarding", "printmode")
			// An allowlist rebuilds the child's environment from scratch.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), helperEnv + "=printmode", noRaceExitSleep()}
			if tc.forward {
				cmd.Env = append(cmd.Env, EnvVar+"="+string(m))
			}
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, Start(cmd, Agent, m))
			got, err := io.ReadAll(out)
			require.NoError(t, err)
			require.NoError(t, cmd.Wait())
			assert.Equal(t, tc.want, string(got), "the child's ResolveMode: got %q, want %q", got, tc.want)
		})
	}
}

// TestIdleReachesEveryThread: in mode background a child that makes threads
// while it is moved to SCHED_IDLE ends with every thread SCHED_IDLE (a
// thread made by one not yet moved copies SCHED_OTHER).
func TestIdleReachesEveryThread(t *testing.T) {
	cmd := helperCmd("TestIdleReachesEveryThread", "many-threads")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, Start(cmd, Agent, ModeBackground))
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	waitFollowUps(t)
	tids, err := tasks(cmd.Process.Pid)
	require.NoError(t, err)
	require.Greater(t, len(tids), 64, "the helper's threads")
	for _, tid := range tids {
		a, err := inspectThread(cmd.Process.Pid, tid)
		require.NoError(t, err)
		assert.Equal(t, "SCHED_IDLE", a.Policy, "thread %d: got %s, want SCHED_IDLE", tid, a.Policy)
	}
}
