//go:build linux

package qos

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The one reader of /proc for processes and threads, and the one wrapper of
// a pidfd: everything in this package that looks at a process goes through
// them.

// proc is one process, or one thread, as /proc/<pid>/stat (or
// /proc/<pid>/task/<tid>/stat) shows it (proc_pid_stat(5)).
type proc struct {
	pid, ppid int
	pgid, sid int
	comm      string
	state     byte   // field 3: R, S, D, Z, T, t, X, ...
	threads   int    // field 20
	start     uint64 // field 22: tells the process from a later one with its pid
	nice      int    // field 19
	policy    int    // field 41
	exiting   bool   // PF_EXITING in field 9
}

// pfExiting is PF_EXITING (include/linux/sched.h), set at the start of
// do_exit (kernel/exit.c, exit_signals).
const pfExiting = 0x00000004

// parseStat parses a stat line. The command name, field 2, is in
// parentheses and may hold spaces and parentheses itself, so fields are
// counted after the last ')'; the first of them is field 3.
func parseStat(b []byte) (proc, bool) {
	i := bytes.IndexByte(b, '(')
	j := bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return proc{}, false
	}
	f := strings.Fields(string(b[j+1:]))
	if len(f) < 41-2 {
		return proc{}, false
	}
	num := func(n int) int { v, _ := strconv.Atoi(f[n-3]); return v }
	p := proc{
		ppid: num(4), pgid: num(5), sid: num(6), threads: num(20), nice: num(19), policy: num(41),
		comm: string(b[i+1 : j]), state: f[0][0],
	}
	p.pid, _ = strconv.Atoi(strings.TrimSpace(string(b[:i])))
	p.start, _ = strconv.ParseUint(f[22-3], 10, 64)
	flags, _ := strconv.ParseUint(f[9-3], 10, 64)
	p.exiting = flags&pfExiting != 0
	return p, p.pid > 0
}

// readProc reads process pid; ok is false when it is gone.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	return parseStat(b)
}

// readThread reads thread tid of process pid: its own nice value and policy.
func readThread(pid, tid int) (proc, error) {
	path := fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid)
	b, err := os.ReadFile(path)
	if err != nil {
		return proc{}, fmt.Errorf("qos: %w", err)
	}
	p, ok := parseStat(b)
	if !ok {
		return proc{}, fmt.Errorf("qos: %s: unexpected %q", path, b)
	}
	return p, nil
}

// live reports whether the process neither exited nor is exiting: a zombie
// (Z, X) or a process past the start of do_exit (PF_EXITING) forks no more.
func (p proc) live() bool { return p.state != 'Z' && p.state != 'X' && !p.exiting }

func (p proc) String() string { return fmt.Sprintf("pid %d (%s)", p.pid, p.comm) }

// startTime returns when process pid started (field 22), or 0 when it
// cannot be read. With the pid it names one process: a pid is reused only
// by a process started later.
func startTime(pid int) uint64 {
	p, _ := readProc(pid)
	return p.start
}

// running reports whether the process with pid is the one that started at
// start and has not begun to exit. An exiting process drops its memory
// (exit_mm) before it is a zombie, and from then its /proc files are root's
// (fs/proc/base.c, task_dump_owner): a step would meet EACCES a moment
// before a pidfd says the process exited.
func running(pid int, start uint64) bool {
	p, ok := readProc(pid)
	return ok && p.start == start && p.live()
}

// exited reports whether the process that had pid and start has exited:
// gone, or a zombie. One still exiting (PF_EXITING, before exit_notify) has
// not.
func exited(pid int, start uint64) bool {
	now, ok := readProc(pid)
	return !ok || now.start != start || now.state == 'Z' || now.state == 'X'
}

// allProcs reads every process in /proc. Processes that exit while it reads
// are left out.
func allProcs() ([]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("qos: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("qos: read /proc: %w", err)
	}
	out := make([]proc, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// tasks lists the thread ids of process pid (proc(5), /proc/pid/task).
func tasks(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, fmt.Errorf("qos: %w", err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// descendants returns the processes below the roots in procs (not the roots
// themselves), parents before their children.
func descendants(procs []proc, roots ...int) []proc {
	kids := make(map[int][]int, len(procs))
	byPid := make(map[int]proc, len(procs))
	for _, p := range procs {
		kids[p.ppid] = append(kids[p.ppid], p.pid)
		byPid[p.pid] = p
	}
	var out []proc
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range kids[pid] {
			if seen[c] {
				continue
			}
			seen[c] = true
			out = append(out, byPid[c])
			queue = append(queue, c)
		}
	}
	return out
}

// liveBelow returns the live processes of procs below root.
func liveBelow(procs []proc, root int) []proc {
	var out []proc
	for _, p := range descendants(procs, root) {
		if p.live() {
			out = append(out, p)
		}
	}
	return out
}

// treeOf returns the live processes below root, read now.
func treeOf(root int) ([]proc, error) {
	procs, err := allProcs()
	if err != nil {
		return nil, err
	}
	return liveBelow(procs, root), nil
}

// pidfd is a process's pidfd (pidfd_open(2), Linux 5.3): it polls readable
// once the process has exited, and a signal sent through it reaches that
// process, never a later one given its pid. Opened while the process cannot
// yet have been reaped (a child before the caller's Wait, a holder before
// its parent may reap it), it names that one process. fd is -1 where the
// kernel has no pidfds; exited then asks waitid(2) with WNOWAIT, which
// answers for the caller's own children only and leaves them for cmd.Wait.
type pidfd struct {
	pid, fd int
}

func openPidfd(pid int) pidfd {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fd = -1
	}
	return pidfd{pid: pid, fd: fd}
}

// exited reports whether the process has exited (a zombie, or reaped).
func (p pidfd) exited() bool {
	if p.fd >= 0 {
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if !errors.Is(err, unix.EINTR) {
				return err == nil && n > 0
			}
		}
	}
	// waitid(2): with WNOHANG and no child in a waitable state, the kernel
	// leaves si_signo 0; ECHILD means cmd.Wait reaped it already.
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD) || err == nil && info.Signo != 0
}

// signal sends sig through the pidfd (pidfd_send_signal(2)).
func (p pidfd) signal(sig unix.Signal) error {
	if p.fd < 0 {
		return unix.ENOSYS
	}
	return unix.PidfdSendSignal(p.fd, sig, nil, 0)
}

func (p pidfd) close() {
	if p.fd >= 0 {
		_ = unix.Close(p.fd)
	}
}
