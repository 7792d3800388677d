//go:build linux

package qos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	// The main-thread helpers need main to run on the main thread: locking in
	// an init function does that (runtime.LockOSThread).
	if strings.HasPrefix(os.Getenv(helperEnv), "mainthread-") {
		runtime.LockOSThread()
	}
	helpers["mainthread-locked"] = func() int { return mainThreadHelper(false) }
	helpers["mainthread-hop"] = func() int { return mainThreadHelper(true) }
	helpers["serving"] = servingHelper
	describeTree = treeReport
	helpers["printmode"] = func() int {
		m, _, err := ResolveMode(os.Getenv(EnvVar))
		fmt.Println(m, err)
		return 0
	}
}

// treeReport describes each process below this one: its ids, state and
// kernel wait channel (proc(5), /proc/<pid>/stat and wchan), its signal
// masks and tracer (/proc/<pid>/status) and its command line.
func treeReport() string {
	procs, err := allProcs()
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range descendants(procs, os.Getpid()) {
		dir := "/proc/" + strconv.Itoa(p.pid) + "/"
		wchan, _ := os.ReadFile(dir + "wchan")
		cmdline, _ := os.ReadFile(dir + "cmdline")
		fmt.Fprintf(&b, "pid %d ppid %d pgid %d sid %d state %c nice %d policy %d wchan %s: %s\n",
			p.pid, p.ppid, p.pgid, p.sid, p.state, p.nice, p.policy, wchan, strings.ReplaceAll(string(cmdline), "\x00", " "))
		status, _ := os.ReadFile(dir + "status")
		for l := range strings.Lines(string(status)) {
			if k, _, _ := strings.Cut(l, ":"); strings.HasPrefix(k, "Sig") || k == "ShdPnd" || k == "TracerPid" {
				b.WriteString("\t" + l)
			}
		}
	}
	return b.String()
}

// helperCmd returns a command that runs helper name in a copy of this test
// binary, on behalf of test (its -test.run pattern, for the reader of ps).
func helperCmd(test, name string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+name, noRaceExitSleep()), env...)
	// A process the helper started that outlives it with its output would
	// keep Wait waiting for the pipe (os/exec): a test must fail on that,
	// not hang.
	cmd.WaitDelay = helperWaitDelay
	return cmd
}

// helperWaitDelay is how long Wait waits, once a helper exited, for its
// output pipes to close.
const helperWaitDelay = 10 * time.Second

// noRaceExitSleep keeps a helper built with -race from sleeping 1 s at exit
// (the race runtime's atexit_sleep_ms option, default 1000).
func noRaceExitSleep() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// mainThreadHelper calls Start, Do and the lowering underneath both from
// the main goroutine on the main thread and prints the main thread's state
// before and after, and how many of the lowerings moved off the main
// thread. With unlock, the main goroutine lets go of the main thread first,
// so the goroutines they create run on it (GOMAXPROCS=1 makes that certain:
// the new goroutine is next to run on the only P, which the main thread
// holds).
func mainThreadHelper(unlock bool) int {
	pid := os.Getpid()
	if unix.Gettid() != pid {
		fmt.Println("main goroutine is not on the main thread")
		return 1
	}
	before, err := inspectThread(pid, pid)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if unlock {
		runtime.UnlockOSThread()
	}
	hops := 0
	for range 5 {
		if lowerAndRun(lowerTo(settingFor(Background, ModeBackground)), func() error { return nil }).hopped {
			hops++
		}
		cmd := exec.Command("/bin/true")
		if err := Start(cmd, Agent, ModeUtility); err != nil {
			fmt.Println(err)
			return 1
		}
		_ = cmd.Wait()
		if err := Do(Background, ModeBackground, func() {}); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	after, err := inspectThread(pid, pid)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("before=%s\nafter=%s\nhops=%d\n", threadLine(before), threadLine(after), hops)
	return 0
}

// servingHelper makes extra threads, enters Serving in the mode given in
// QOS_TEST_MODE, makes more threads, reports "ready" and waits for stdin to
// close while the test reads its threads.
func servingHelper() int {
	release := make(chan struct{})
	defer close(release)
	lockThreads(4, release)
	if err := EnterServing(Mode(os.Getenv("QOS_TEST_MODE"))); err != nil {
		fmt.Println(err)
		return 1
	}
	lockThreads(4, release)
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// lockThreads starts n goroutines that each hold an OS thread of their own
// until release closes, and returns their thread ids once all hold one. More
// locked goroutines than the process has threads forces the runtime to make
// new threads.
func lockThreads(n int, release <-chan struct{}) []int {
	tids := make(chan int, n)
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tids <- unix.Gettid()
			<-release
		}()
	}
	out := make([]int, n)
	for i := range out {
		out[i] = <-tids
	}
	return out
}

// threadLine is the part of Applied that differs between threads.
func threadLine(a Applied) string {
	return fmt.Sprintf("nice %d %s io %s/%d", a.Nice, a.Policy, a.IOClass, a.IOLevel)
}

// base is the state of an unlowered thread of this test process (the main
// thread's: nothing lowers it).
func base(t *testing.T) Applied {
	t.Helper()
	a, err := inspectThread(os.Getpid(), os.Getpid())
	require.NoError(t, err)
	require.Equal(t, 0, a.Nice, "precondition: run the tests at nice 0, got %d", a.Nice)
	require.Equal(t, "SCHED_OTHER", a.Policy, "precondition: run the tests under SCHED_OTHER")
	return a
}

// threadStates reads every thread of this process; threads that exit while
// it reads are left out.
func threadStates(t *testing.T) map[int]Applied {
	t.Helper()
	pid := os.Getpid()
	tids, err := tasks(pid)
	require.NoError(t, err)
	out := make(map[int]Applied, len(tids))
	for _, tid := range tids {
		if a, err := inspectThread(pid, tid); err == nil {
			out[tid] = a
		}
	}
	return out
}

// requireNoLoweredThread waits for each thread of this process that is
// lowered (differs from b) to exit, as retired threads do moments after
// their goroutine ends, until a read of every thread finds none lowered.
// It waits on a thread pidfd (pidfd_open(2), PIDFD_THREAD since Linux 6.9:
// readable when the thread exits), or on older kernels on /proc, at most
// 10 s a thread, and fails on one that stays lowered that long. It reads
// again after each wait, and wants two reads in a row without a lowered
// thread: a read can miss one (seen once in a race run with builds on
// both cores: a lowered thread that one read did not report was there,
// lowered, in the next), and a thread lowered for good is never missed
// twice.
func requireNoLoweredThread(t *testing.T, b Applied) {
	t.Helper()
	for clean := 0; clean < 2; {
		clean++
		for tid, a := range threadStates(t) {
			if threadLine(a) != threadLine(b) {
				clean = 0
				waitThreadExit(t, tid)
			}
		}
	}
}

func waitThreadExit(t *testing.T, tid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(tid, unix.PIDFD_THREAD)
	if errors.Is(err, unix.ESRCH) {
		return // gone already
	}
	if errors.Is(err, unix.EINVAL) {
		// Before Linux 6.9 there is no thread pidfd and nothing else
		// notifies a thread's exit to another thread: look for it in
		// /proc every millisecond instead.
		waitThreadGone(t, tid)
		return
	}
	require.NoError(t, err)
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 10_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		require.NoError(t, err)
		require.Equal(t, 1, n, "thread %d stayed lowered for 10 s without exiting", tid)
		return
	}
}

// waitThreadGone waits, at most 10 s, until /proc no longer lists thread
// tid of this process.
func waitThreadGone(t *testing.T, tid int) {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/task/%d", os.Getpid(), tid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return
		}
		require.True(t, time.Now().Before(deadline), "thread %d stayed lowered for 10 s without exiting", tid)
		<-time.NewTimer(time.Millisecond).C
	}
}

// waitFollowUps waits, at most 30 s, for the steps Start queued after its
// children started.
func waitFollowUps(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, WaitApplied(ctx), "steps queued after start still pending after 30 s")
}

// shellTree starts, through start, a shell that waits for a line on stdin,
// then runs a second shell (a grandchild: "; true" keeps the first shell from
// exec'ing it) that prints its pid and waits for another line. It returns the
// child's and the grandchild's state, and ends both.
func shellTree(t *testing.T, start func(*exec.Cmd) error) (child, grandchild Applied) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `read go; sh -c 'echo $$; read stop'; true`)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, start(cmd))
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	waitFollowUps(t)
	child, err = Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	_, err = io.WriteString(in, "go\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	gpid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	require.NotEqual(t, cmd.Process.Pid, gpid, "the grandchild must be a process of its own")
	grandchild, err = Inspect(gpid)
	require.NoError(t, err)
	_, err = io.WriteString(in, "stop\n")
	require.NoError(t, err)
	return child, grandchild
}

// busyLoops starts one busy loop at nice 0 per CPU, each in a process group
// of its own, for the rest of the test: the loaded machine the person at
// the screen has while agents build. Each spins for 45 ms, then sleeps
// 5 ms, as a compiler reading its files does, so that a SCHED_IDLE agent
// still gets some CPU (under pure busy loops it gets a slice about once a
// second, sched(7) and kernel/sched/fair.c: weight 3 against 1024).
func busyLoops(t *testing.T) {
	t.Helper()
	for range runtime.NumCPU() {
		spin := helperCmd(t.Name(), "busy")
		spin.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, spin.Start())
		t.Cleanup(func() { _ = unix.Kill(-spin.Process.Pid, unix.SIGKILL); _ = spin.Wait() })
	}
}

func init() {
	// A tool's busy loop that leaves a SCHED_IDLE thread a share: 45 ms
	// on the CPU out of every 50.
	helpers["busy"] = func() int {
		tick := time.NewTicker(50 * time.Millisecond)
		for {
			for t0 := time.Now(); time.Since(t0) < 45*time.Millisecond; {
			}
			<-tick.C
		}
	}
}
