//go:build linux

package qos

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/oneline"
)

// child tells whether a started child has exited, so that a step meeting a
// dead child is dropped without guessing from an errno (a dead child's
// /proc/<pid>/autogroup is root's: a write answers EACCES, not ESRCH). It
// holds a pidfd (pidfd_open(2), Linux 5.3), readable once the process has
// exited, opened in Start before the caller can reap the child, so it is
// never another process's. Without one it asks waitid(2) with WNOWAIT, which
// leaves the child for cmd.Wait to reap.
type child struct {
	pid   int
	pidfd int // -1: none
}

func openChild(pid int) child {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fd = -1
	}
	return child{pid: pid, pidfd: fd}
}

func (c child) exited() bool {
	if c.pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(c.pidfd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if !errors.Is(err, unix.EINTR) {
				return err == nil && n > 0
			}
		}
	}
	return c.waitid()
}

func (c child) waitid() bool {
	// waitid(2): with WNOHANG and no child in a waitable state, the
	// kernel leaves si_signo 0; ECHILD means cmd.Wait reaped it already.
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD) || err == nil && info.Signo != 0
}

func (c child) close() {
	if c.pidfd >= 0 {
		_ = unix.Close(c.pidfd)
	}
}

// gone reports whether the child has exited or is exiting. The pidfd says
// so only once the child is a zombie; an exiting process drops its memory
// (exit_mm) before that, and from then its /proc files are root's
// (fs/proc/base.c, task_dump_owner), so a step meets EACCES a moment
// earlier. PF_EXITING, set at the start of do_exit (kernel/exit.c,
// exit_signals), covers that moment without waiting for it.
func (f *followUp) gone() bool {
	if f.child.exited() {
		return true
	}
	flags, start, ok := procFlags(f.child.pid)
	return !ok || start != f.start || flags&pfExiting != 0
}

// pfExiting is PF_EXITING (include/linux/sched.h).
const pfExiting = 0x00000004

// procFlags reads fields 9 (flags) and 22 (start time) of /proc/<pid>/stat
// (proc_pid_stat(5)); ok is false when the process is gone.
func procFlags(pid int) (flags uint64, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 22-2 {
		return 0, 0, false
	}
	flags, _ = strconv.ParseUint(f[9-3], 10, 64)
	start, _ = strconv.ParseUint(f[22-3], 10, 64)
	return flags, start, true
}

// moveIdle moves every thread of the child to SCHED_IDLE at the tier's nice
// value. A child that is gone needs nothing; checking first keeps the move
// off a later process given the pid after the caller reaped the child.
func (f *followUp) moveIdle() error {
	if f.gone() {
		return nil
	}
	err := idleProcess(f.child.pid, f.nice)
	if err != nil && f.gone() {
		return nil
	}
	return err
}

// writeAutogroup writes the tier's nice value to /proc/<pid>/autogroup. The
// file is opened before the last look at the child: if the child still runs
// then, the open file is its own, not that of a later process given its pid.
// An EAGAIN (the rate limit) is returned as it is, for the pacer to retry.
func (f *followUp) writeAutogroup() error {
	pid := f.child.pid
	if f.gone() || !rootTaskGroup(pid) {
		return nil
	}
	own, _, err := autogroup(os.Getpid())
	if err != nil {
		return err
	}
	name, _, err := autogroup(pid)
	if err != nil || name == own {
		if err != nil && f.gone() {
			return nil
		}
		return err // nil: not in a new autogroup, its nice value competes already
	}
	file, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/autogroup", os.O_WRONLY, 0)
	if err != nil {
		if f.gone() {
			return nil
		}
		return err
	}
	defer file.Close()
	if f.gone() {
		return nil
	}
	_, err = file.WriteString(strconv.Itoa(f.nice))
	if err != nil && !errors.Is(err, unix.EAGAIN) && (errors.Is(err, unix.ESRCH) || f.gone()) {
		return nil
	}
	return err
}

func (f *followUp) stepName(step string) string {
	if step == "SCHED_IDLE" {
		return fmt.Sprintf("SCHED_IDLE, nice %d", f.nice)
	}
	return fmt.Sprintf("autogroup nice %d", f.nice)
}

// errRateLimit is the error of an autogroup write the kernel's rate limit
// kept refusing for the pacer's whole budget: another process writes
// autogroups without pause.
type errRateLimit struct {
	err    error
	budget time.Duration
}

func (e errRateLimit) Error() string {
	return fmt.Sprintf("refused by the kernel's rate limit (one write per 100 ms system-wide) for %v: %v", e.budget, e.err)
}

func (e errRateLimit) Unwrap() error { return e.err }

// childStatus is what Inspect shows of a child's follow-ups.
type childStatus struct {
	start   uint64 // see followUp.start
	pending []string
	failed  error
}

// statusTable holds the status of children with follow-ups queued, and of
// the last maxFailed that failed (a failure stays visible after the child's
// steps are done; the oldest is forgotten first).
type statusTable struct {
	byPid  map[int]*childStatus
	failed []int // pids with a failure, oldest first
}

const maxFailed = 64

func (t *statusTable) add(f *followUp) {
	if t.byPid == nil {
		t.byPid = make(map[int]*childStatus)
	}
	s := &childStatus{start: f.start}
	if f.idle {
		s.pending = append(s.pending, f.stepName("SCHED_IDLE"))
	}
	if f.autogroup {
		s.pending = append(s.pending, f.stepName("autogroup"))
	}
	t.byPid[f.child.pid] = s
	f.status = s
}

func (t *statusTable) done(f *followUp, step string, err *StepError) {
	s := f.status
	for i, p := range s.pending {
		if p == step {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			break
		}
	}
	if err != nil {
		s.failed = oneline.Join(s.failed, err)
		t.failed = append(t.failed, f.child.pid)
		if len(t.failed) > maxFailed {
			if old := t.byPid[t.failed[0]]; old != nil && len(old.pending) == 0 {
				delete(t.byPid, t.failed[0])
			}
			t.failed = t.failed[1:]
		}
	}
	if len(s.pending) == 0 && s.failed == nil && t.byPid[f.child.pid] == s {
		delete(t.byPid, f.child.pid)
	}
}

// lookup returns the status of process pid, if it is the child the status
// was recorded for: the one that started at start.
func (t *statusTable) lookup(pid int, start uint64) (pending []string, failed error) {
	s := t.byPid[pid]
	if s == nil || s.start != start {
		return nil, nil
	}
	return append([]string(nil), s.pending...), s.failed
}

// report hands the failure of a step after start to OnError and Logger.
func (o Options) report(cmd *exec.Cmd, err error) {
	if o.OnError != nil {
		o.OnError(cmd, err)
	}
	l := o.Logger
	if l == nil && o.OnError == nil {
		l = slog.Default()
	}
	if l != nil {
		l.Warn("qos: a step after start failed; the command runs unlowered on that axis",
			"path", cmd.Path, "err", err)
	}
}
