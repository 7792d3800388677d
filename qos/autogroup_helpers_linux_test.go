//go:build linux

package qos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	helpers["setsid-bursts"] = setsidBurstsHelper
	helpers["autogroup-exhausted"] = autogroupExhaustedHelper
}

// burstCount is what a burst of Starts did: how many started, how many
// Starts returned an error, how many children did not exit by themselves
// with status 0, and how many failures were reported (logged).
type burstCount struct {
	Started, Errors, Killed, Reported int
}

type burstReport struct {
	Uid            int
	Sequential     burstCount
	Concurrent     burstCount
	AtNice         int       // long-lived children whose autogroup reached utilityNice
	DelaysMs       []float64 // from each one's Start returning to that
	NoSetsidWrites int64     // autogroup writes for Starts without Setsid
	Failures       []string  // what was reported
}

// setsidBurstsHelper makes the bursts of TestAutogroupRateLimit and prints
// a burstReport as JSON.
func setsidBurstsHelper() int {
	r := burstReport{Uid: os.Geteuid()}
	var (
		reported atomic.Int64
		mu       sync.Mutex
		writes   atomic.Int64
	)
	write := autogroups.write // before any work is queued
	autogroups.write = func(s *session) error { writes.Add(1); return write(s) }
	slog.SetDefault(slog.New(errHandler(func(err error) {
		reported.Add(1)
		mu.Lock()
		r.Failures = append(r.Failures, err.Error())
		mu.Unlock()
	})))
	for range 20 {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := Start(cmd, Agent, ModeUtility); err != nil {
			r.Sequential.Errors++
			continue
		}
		r.Sequential.Started++
		if err := cmd.Wait(); err != nil {
			r.Sequential.Killed++
		}
	}
	if err := waitAll(); err != nil {
		fmt.Println(err)
		return 1
	}
	r.Sequential.Reported = int(reported.Swap(0))
	r.Concurrent, r.AtNice, r.DelaysMs = concurrentBurst()
	r.Concurrent.Reported = int(reported.Load())
	mu.Lock()
	defer mu.Unlock()
	before := writes.Load()
	noSetsid, _, _ := startMany(false)
	endAll(noSetsid)
	_ = waitAll()
	r.NoSetsidWrites = writes.Load() - before
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return 0
}

// concurrentBurst starts 20 long-lived Setsid children at once and follows
// their autogroups until each reaches utilityNice (at most 30 s).
func concurrentBurst() (burstCount, int, []float64) {
	cmds, started, errs := startMany(true)
	c := burstCount{Started: len(cmds), Errors: errs}
	var delays []float64
	deadline := time.Now().Add(30 * time.Second)
	for seen := make(map[int]bool); len(seen) < len(cmds) && time.Now().Before(deadline); {
		for i, cmd := range cmds {
			if _, nice, err := autogroup(cmd.Process.Pid); err == nil && nice == utilityNice && !seen[i] {
				seen[i] = true
				delays = append(delays, float64(time.Since(started[i]).Microseconds())/1000)
			}
		}
		// A measurement poll, not a synchronisation: nothing in the kernel
		// announces an autogroup's new nice value.
		<-time.NewTimer(time.Millisecond).C
	}
	c.Killed = endAll(cmds)
	_ = waitAll()
	return c, len(delays), delays
}

// startMany starts 20 children that wait for stdin to close (cat), at once,
// in new sessions or not, and returns the ones that started, when each Start
// returned, and how many Starts failed.
func startMany(setsid bool) ([]*exec.Cmd, []time.Time, int) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		cmds    []*exec.Cmd
		started []time.Time
		errs    int
	)
	for range 20 {
		wg.Go(func() {
			cmd := exec.Command("/bin/cat")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
			cmd.Stdout = io.Discard
			in, perr := cmd.StdinPipe()
			err := errors.Join(perr, Start(cmd, Agent, ModeUtility))
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				return
			}
			stdins[cmd] = in
			cmds, started = append(cmds, cmd), append(started, now)
		})
	}
	wg.Wait()
	return cmds, started, errs
}

// stdins holds the write end of each child's stdin, for endAll; startMany
// and endAll run on the helper's main goroutine only.
var stdins = map[*exec.Cmd]io.Closer{}

// endAll closes each child's stdin and returns how many did not then exit
// by themselves with status 0.
func endAll(cmds []*exec.Cmd) (killed int) {
	for _, cmd := range cmds {
		_ = stdins[cmd].Close()
		delete(stdins, cmd)
		if err := cmd.Wait(); err != nil {
			killed++
		}
	}
	return killed
}

func waitAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return WaitApplied(ctx)
}

// errHandler is a slog.Handler that passes the "err" of each record to
// its function: how a test sees the errors qos logs.
type errHandler func(error)

func (h errHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h errHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h errHandler) WithGroup(string) slog.Handler            { return h }

func (h errHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "err" {
			h(err)
		}
		return true
	})
	return nil
}

// autogroupExhaustedHelper starts, as an unprivileged user whose autogroup
// writes all meet the rate limit, a Setsid child that waits on its stdin,
// and prints what Start returned, whether the child still ran after its
// step failed, and what was reported (logged) and what Inspect said. The
// pacer gives a write up after a budget, cut to 1 s here.
//
// The test keeps the limit exhausted by writing without pause, but a pause
// of 100 ms in those writes (the VM's CPUs taken away by its host under
// load) lets one of the helper's writes land, and then nothing fails. Such a
// run is no test of a late failure, so the helper ends that child and tries
// again, up to 5 times.
func autogroupExhaustedHelper() int {
	autogroups.budget = time.Second
	for range 5 {
		if done, code := autogroupExhaustedOnce(); done {
			return code
		}
	}
	fmt.Println("a write landed in each of 5 tries: the rate limit was never exhausted")
	return 1
}

func autogroupExhaustedOnce() (done bool, code int) {
	cmd := exec.Command("/bin/cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Println(err)
		return true, 1
	}
	reported := make(chan error, 1)
	slog.SetDefault(slog.New(errHandler(func(err error) { reported <- err })))
	err = Start(cmd, Agent, ModeUtility)
	if werr := waitAll(); werr != nil {
		fmt.Println(werr)
		return true, 1
	}
	var got error
	select {
	case got = <-reported:
	default:
		_ = in.Close()
		_ = cmd.Wait()
		return false, 0 // the write landed: try again
	}
	a, ierr := Inspect(cmd.Process.Pid)
	// A killed child stays a zombie until reaped: ask its state, then let
	// it end by itself (cat exits 0 at the end of its input).
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	running := ierr == nil && !strings.Contains(string(stat), ") Z ")
	_ = in.Close()
	var se *stepError
	fmt.Printf("start: %v; running after the failure: %t; reported: %T wrapping EAGAIN: %t; Inspect: wraps EAGAIN: %t; exit: %v\n",
		err, running, got, errors.As(got, &se) && errors.Is(got, unix.EAGAIN), errors.Is(a.Failed, unix.EAGAIN), cmd.Wait())
	return true, 0
}

func init() { helpers["cgroup-delegated"] = cgroupDelegatedHelper }

// cgroupDelegatedHelper runs as an unprivileged user inside the cgroup
// QOS_TEST_CGROUP delegated to it, and prints what a Group's Start with
// that cgroup as Group.Cgroup does before and after JoinLeaf: first
// without the helpers (as in an app without Main), so that the command
// itself is in the tier's leaf, then held.
func cgroupDelegatedHelper() int {
	dir := os.Getenv("QOS_TEST_CGROUP")
	fmt.Printf("uid %d in %s\n", os.Geteuid(), ownCgroup(os.Getpid()))
	hooked.Store(false)
	slog.SetDefault(slog.New(slog.DiscardHandler)) // that this Group holds less is known
	o := &Group{Cgroup: dir}
	first := exec.Command("/bin/true")
	err := o.Start(first, Agent, ModeUtility)
	fmt.Printf("in its own cgroup: EBUSY %t, names JoinLeaf %t, started %t\n",
		errors.Is(err, unix.EBUSY), strings.Contains(fmt.Sprint(err), "JoinLeaf"), first.Process != nil)
	fmt.Printf("join: %v\n", JoinLeaf(dir, "app"))
	cmd := exec.Command("/bin/cat")
	in, _ := cmd.StdinPipe()
	err = o.Start(cmd, Agent, ModeUtility)
	if err != nil {
		fmt.Printf("start: %v\n", err)
		return 0
	}
	knob, _ := os.ReadFile(fmt.Sprintf("%s/offmain-nice%d/cpu.weight.nice", dir, utilityNice))
	limits, _ := os.ReadFile(fmt.Sprintf("%s/offmain-nice%d/io.max", dir, utilityNice))
	fmt.Printf("start: %v; child in %s; cpu.weight.nice %s; io.max for every disk: %t\n", err, ownCgroup(cmd.Process.Pid),
		strings.TrimSpace(string(knob)), len(diskLines()) > 0 && slices.Equal(sortedLines(limits), diskLines()))
	_ = in.Close()
	_ = cmd.Wait()
	hooked.Store(true)
	groupInCgroup(dir)
	return 0
}

// groupInCgroup starts, through a Group with the cgroup lever, a shell
// whose background child ignores SIGTERM, and prints where the tree runs,
// what Stop said (it kills through cgroup.kill) and whether the command's
// own cgroup is gone afterwards.
func groupInCgroup(dir string) {
	g := Group{Cgroup: dir, KillAfter: 200 * time.Millisecond}
	cmd := exec.Command("/bin/sh", "-c", "(trap '' TERM; echo $(sh -c 'echo $PPID'); exec sleep 1000) & wait")
	out, _ := cmd.StdoutPipe()
	if err := g.Start(cmd, Agent, ModeUtility); err != nil {
		fmt.Printf("group: %v\n", err)
		return
	}
	var child int
	_, err := fmt.Fscan(out, &child)
	own := ownCgroup(child)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := g.Stop(ctx)
	_ = cmd.Wait()
	_, statErr := os.Stat(filepath.Join(dir, own[strings.LastIndex(own, "/offmain-"):]))
	fmt.Printf("group: %v; child in %s; stop killed it: %t; its cgroup removed: %t\n",
		err, filepath.Base(filepath.Dir(own))+"/"+strings.SplitN(filepath.Base(own), "-", 2)[0],
		errors.Is(stop, ErrKilled) && strings.Contains(stop.Error(), fmt.Sprintf("pid %d ", child)), errors.Is(statErr, os.ErrNotExist))
}

// ownCgroup returns process pid's cgroup v2 path ("0::<path>" in
// /proc/<pid>/cgroup).
func ownCgroup(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return p
		}
	}
	return "?"
}

func init() { helpers["many-threads"] = manyThreadsHelper }

// manyThreadsHelper makes 64 OS threads as fast as it can from its first
// moment, says "ready", and holds them until stdin closes: the threads a
// child makes while Start's SCHED_IDLE move runs.
func manyThreadsHelper() int {
	release := make(chan struct{})
	defer close(release)
	for range 16 {
		lockThreads(4, release)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func init() { helpers["setsid-daemons"] = setsidDaemonsHelper }

// daemonReport is what setsidDaemonsHelper found of each daemon a Setsid
// child left behind.
type daemonReport struct {
	Uid     int
	Started int
	Errors  []string
	Daemons []daemonState
}

type daemonState struct {
	Pid           int
	AutogroupNice int
	Own           bool // in an autogroup other than the app's
	Policy        string
}

// setsidDaemonsHelper starts, at once and in the mode QOS_TEST_MODE names,
// ten Setsid children that each daemonize as a wrapper script does: start
// a grandchild in the background, print its pid, exit. Once Start's steps
// ran, it reads each grandchild's autogroup and policy and prints a
// daemonReport as JSON.
func setsidDaemonsHelper() int {
	mode := Mode(os.Getenv("QOS_TEST_MODE"))
	r := daemonReport{Uid: os.Geteuid()}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		gpids []int
	)
	for range 10 {
		wg.Go(func() {
			pid, err := startDaemonizer(mode)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.Errors = append(r.Errors, err.Error())
				return
			}
			r.Started++
			gpids = append(gpids, pid)
		})
	}
	wg.Wait()
	defer func() {
		for _, pid := range gpids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}()
	if err := waitAll(); err != nil {
		fmt.Println(err)
		return 1
	}
	own, _, _ := autogroup(os.Getpid())
	for _, pid := range gpids {
		a, err := Inspect(pid)
		if err != nil {
			r.Errors = append(r.Errors, err.Error())
			continue
		}
		r.Daemons = append(r.Daemons, daemonState{Pid: pid, AutogroupNice: a.AutogroupNice, Own: a.Autogroup != own, Policy: a.Policy})
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return 0
}

// startDaemonizer starts one daemonizing Setsid child and returns its
// grandchild's pid once the child has exited.
func startDaemonizer(mode Mode) (int, error) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 1000 </dev/null >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out strings.Builder
	cmd.Stdout = &out
	if err := Start(cmd, Agent, mode); err != nil {
		return 0, err
	}
	if err := cmd.Wait(); err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out.String()))
}
