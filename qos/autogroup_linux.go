//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Autogroup (sched(7), "The autogroup feature"): with
// /proc/sys/kernel/sched_autogroup_enabled at 1, setsid(2) puts the caller in
// a new autogroup, and the CPU is shared between autogroups first, so a
// child's own nice value no longer weighs against the GUI. The group's own
// weight comes from the nice value written to /proc/<pid>/autogroup.
const autogroupSysctl = "/proc/sys/kernel/sched_autogroup_enabled"

// rootAutogroup is the name Inspect reports for the kernel's default
// autogroup: the one every process belongs to until it or an ancestor calls
// setsid(2). The kernel prints nothing for it in /proc/<pid>/autogroup
// (kernel/sched/autogroup.c, proc_sched_autogroup_show_task skips a group
// that is not an autogroup, and the default one is the root task group),
// and its nice value cannot be changed, so it is always 0.
const rootAutogroup = "/"

// autogroup reads /proc/<pid>/autogroup.
func autogroup(pid int) (name string, nice int, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/autogroup")
	if err != nil {
		return "", 0, fmt.Errorf("qos: %w", err)
	}
	name, nice, err = parseAutogroup(string(b))
	if err != nil {
		return "", 0, fmt.Errorf("qos: /proc/%d/autogroup: %w", pid, err)
	}
	return name, nice, nil
}

// parseAutogroup parses "/autogroup-42 nice 5\n", or "" for the default
// autogroup.
func parseAutogroup(s string) (name string, nice int, err error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return rootAutogroup, 0, nil
	}
	if len(f) != 3 || f[1] != "nice" {
		return "", 0, fmt.Errorf("unexpected %q", s)
	}
	nice, err = strconv.Atoi(f[2])
	if err != nil {
		return "", 0, fmt.Errorf("unexpected %q", s)
	}
	return f[0], nice, nil
}

// autogroupOn reports whether the kernel puts a new session in a new
// autogroup.
func autogroupOn() bool {
	b, err := os.ReadFile(autogroupSysctl)
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// writeFile writes s to an existing file (proc and cgroup files), with no
// O_CREATE or O_TRUNC.
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rootTaskGroup reports whether process pid's CPU time is shared out by
// the root task group, the only place the kernel uses autogroups: a task in
// any cgroup with the cpu controller competes by that cgroup's weight, its
// autogroup unused (kernel/sched/autogroup.c, task_wants_autogroup). With
// cgroup v1 that is a cpu hierarchy path other than "/"; with cgroup v2, a
// cgroup whose cpu.weight file exists (the controller is enabled for it).
// When it cannot tell, it says true, and the autogroup is written anyway.
func rootTaskGroup(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return true
	}
	v2 := ""
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "cpu") {
			return f[2] == "/"
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
	}
	if v2 == "" || v2 == "/" {
		return true
	}
	for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(mnt, v2, "cpu.weight")); err == nil {
			return false
		}
	}
	return true
}

// A session is an autogroup whose nice value qos sets to a tier's: that of
// a new session a command made (Setsid), or one a held tree's process made
// later. The autogroup belongs to the session (kernel/sched/autogroup.c,
// sched_autogroup_create_attach at setsid), so the write goes through pid
// while it runs, else through any member of the session still running: a
// daemonizing child (a wrapper script, nohup, a double fork) exits at once
// and leaves its session to a grandchild.
type session struct {
	pid    int         // a process in it, the leader for a new session
	start  uint64      // pid's start time
	sid    int         // the session's id: its leader's pid
	name   string      // the autogroup as first read ("/autogroup-42"), or ""
	nice   int         // the tier's nice value
	app    string      // the app's autogroup, never written: its members weigh within it already
	path   string      // the command whose session it is, for errors
	report func(error) // where a failure goes; nil: only Inspect shows it

	// Owned by the pacer (under its lock).
	refused time.Time     // when the rate limit first refused it
	done    chan struct{} // closed once the write landed, was dropped or failed
	err     error         // why it failed, a *stepError; set before done closes
}

// newSession returns the session that process pid, of command path, is in,
// led by sid, for the tier's nice value.
func newSession(pid, sid, nice int, path string) *session {
	s := &session{pid: pid, start: startTime(pid), sid: sid, nice: nice, path: path, done: make(chan struct{})}
	s.name, _, _ = autogroup(pid)
	s.app, _, _ = autogroup(os.Getpid())
	return s
}

func (s *session) step() string { return fmt.Sprintf("autogroup nice %d", s.nice) }

// target is the process the write goes through: pid while it runs, else a
// member of the session still running that is in the same autogroup (its
// ids only grow, so no later session that got the same sid is touched), or
// that started after pid when the autogroup was not read.
func (s *session) target() (pid int, start uint64, ok bool) {
	if running(s.pid, s.start) {
		return s.pid, s.start, true
	}
	procs, err := allProcs()
	if err != nil {
		return 0, 0, false
	}
	for _, p := range procs {
		if p.sid != s.sid || !p.live() || s.name == "" && p.start < s.start {
			continue
		}
		if s.name != "" {
			if name, _, err := autogroup(p.pid); err != nil || name != s.name {
				continue
			}
		}
		return p.pid, p.start, true
	}
	return 0, 0, false
}

// write sets the session's autogroup to the tier's nice value. A session
// with no member left needs nothing. An EAGAIN (the rate limit) is returned
// as it is, for the pacer to retry; a member that exits while the write is
// under way (errExited, or any error once it no longer runs) gives way to
// the next: the leader of a daemonizing session most often, which exits
// as soon as its grandchild runs. If sessionTries members in turn exit
// so, the write fails with errExited rather than count as done.
func (s *session) write() error {
	for range sessionTries {
		pid, start, ok := s.target()
		if !ok {
			return nil
		}
		err := writeGroupNice(pid, start, s.nice, s.app)
		if err != nil && !errors.Is(err, unix.EAGAIN) && !running(pid, start) {
			continue
		}
		return err
	}
	if _, _, ok := s.target(); !ok {
		return nil // the last of them is gone: nothing to weigh
	}
	return fmt.Errorf("%w, in %d of the session's members in turn", errExited, sessionTries)
}

// sessionTries is how many of a session's members write tries in turn.
const sessionTries = 8

// errExited is writeGroupNice's when the process exited before the write:
// nothing was written, and another member of its session may take it.
var errExited = errors.New("the process exited")

// writeGroupNice writes nice to /proc/<pid>/autogroup unless the process
// is in the app's autogroup app or not in the root task group. The file is
// opened before the last look at the process: if it still runs then, the
// open file is its own, not that of a later process given its pid; if it
// does not, nothing is written and the error is errExited.
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
		return errExited
	}
	_, err = file.WriteString(strconv.Itoa(nice))
	return err
}
