//go:build linux

package qos

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/oneline"
)

// A followUp is the step Start can take for a child only once the child
// runs and, for a child it could not trace (see trace_linux.go), only after
// Start returned: the nice value of the autogroup a new session got.
type followUp struct {
	child   pidfd
	start   uint64       // the child's start time (proc_pid_stat(5) field 22)
	group   string       // the session's autogroup as first read ("/autogroup-42"), or ""
	nice    int          // the tier's nice value
	report  func(error)  // hands a failure to Options.OnError and Logger
	refused time.Time    // when the kernel's rate limit first refused it
	status  *childStatus // what Inspect shows; guarded by pacer.mu
}

// target is the process whose /proc/<pid>/autogroup the write goes
// through: the child while it runs, else any member of its session still
// running. Any member will do, since the autogroup belongs to the session
// (kernel/sched/autogroup.c, sched_autogroup_create_attach at setsid): a
// daemonizing child (a wrapper script, nohup, a double fork) exits at once
// and leaves its session to a grandchild. A member must have started after
// the child and, when the child's autogroup was read, be in that same
// autogroup (the ids only grow), so no later session that got the child's
// pid as its id is touched.
func (f *followUp) target() (pid int, start uint64, ok bool) {
	if !f.child.exited() && running(f.child.pid, f.start) {
		return f.child.pid, f.start, true
	}
	procs, err := allProcs()
	if err != nil {
		return 0, 0, false
	}
	for _, p := range procs {
		if p.sid != f.child.pid || !p.live() || p.start < f.start {
			continue
		}
		if f.group != "" {
			if name, _, err := autogroup(p.pid); err != nil || name != f.group {
				continue
			}
		}
		return p.pid, p.start, true
	}
	return 0, 0, false
}

// writeAutogroup writes the tier's nice value to the session's autogroup.
// A session with no member left needs nothing. An EAGAIN (the rate limit)
// is returned as it is, for the pacer to retry; a member that exits while
// the write is under way gives way to the next.
func (f *followUp) writeAutogroup() error {
	for range 3 {
		pid, start, ok := f.target()
		if !ok {
			return nil
		}
		own, _, err := autogroup(os.Getpid())
		if err != nil {
			return err
		}
		err = writeGroupNice(pid, start, f.nice, own)
		if err == nil || errors.Is(err, unix.EAGAIN) || running(pid, start) {
			return err
		}
	}
	return nil
}

// writeGroupNice writes nice to /proc/<pid>/autogroup unless the process
// is in the app's autogroup app or not in the root task group. The file is
// opened before the last look at the process: if it still runs then, the
// open file is its own, not that of a later process given its pid.
func writeGroupNice(pid int, start uint64, nice int, app string) error {
	if !rootTaskGroup(pid) {
		return nil // a cgroup with the cpu controller weighs it, not its autogroup
	}
	name, _, err := autogroup(pid)
	if err != nil || name == app {
		return err // nil: not in a new autogroup, its nice value competes already
	}
	file, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/autogroup", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	if !running(pid, start) {
		return nil
	}
	_, err = file.WriteString(strconv.Itoa(nice))
	return err
}

func (f *followUp) stepName() string { return fmt.Sprintf("autogroup nice %d", f.nice) }

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

// childStatus is what Inspect shows of a child's steps after start.
type childStatus struct {
	pid     int
	start   uint64 // see followUp.start
	pending []string
	failed  error
}

// statusTable holds the status of children with a step pending, and of
// those with a failed step while they run: an entry goes once nothing is
// pending and its child has exited (or nothing failed), so the table is
// bounded by the children that run or wait for a step. Exited children are
// found when the table is next used (add, done, lookup).
type statusTable struct {
	byPid map[int]*childStatus
	alive func(pid int, start uint64) bool // nil: running
}

// add records steps pending (or none) for a child and returns its entry,
// the one it has already if any.
func (t *statusTable) add(pid int, start uint64, pending ...string) *childStatus {
	t.prune()
	if s := t.byPid[pid]; s != nil && s.start == start {
		s.pending = append(s.pending, pending...)
		return s
	}
	if t.byPid == nil {
		t.byPid = make(map[int]*childStatus)
	}
	s := &childStatus{pid: pid, start: start, pending: pending}
	t.byPid[pid] = s
	return s
}

// done records that step ran for s, with err if it failed.
func (t *statusTable) done(s *childStatus, step string, err *StepError) {
	for i, p := range s.pending {
		if p == step {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			break
		}
	}
	if err != nil {
		s.failed = oneline.Join(s.failed, err)
	}
	t.prune()
}

// fail records a failed step that was never pending (taken at exec).
func (t *statusTable) fail(pid int, start uint64, err *StepError) {
	t.done(t.add(pid, start), "", err)
}

// prune drops the entries with nothing pending whose child exited or that
// hold no failure.
func (t *statusTable) prune() {
	alive := t.alive
	if alive == nil {
		alive = running
	}
	for pid, s := range t.byPid {
		if len(s.pending) == 0 && (s.failed == nil || !alive(s.pid, s.start)) {
			delete(t.byPid, pid)
		}
	}
}

// lookup returns the status of process pid, if it is the child the status
// was recorded for: the one that started at start.
func (t *statusTable) lookup(pid int, start uint64) (pending []string, failed error) {
	t.prune()
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
