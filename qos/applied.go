package qos

import (
	"fmt"
	"strings"

	"github.com/offmain/offmain/internal/oneline"
)

// Applied is what [Inspect] reads back about a process (its main thread)
// and, on Linux, the tree of processes below it. Fields a platform cannot
// report stay zero.
type Applied struct {
	// Pid is the process the fields describe: the pid Inspect was given,
	// or, for the cmd.Process of a command a [Group] holds on Linux, the
	// command's own pid (once the command has exited, the oldest process
	// left of its tree).
	Pid int

	Nice    int    // nice value (Linux: /proc/<pid>/stat field 19)
	Policy  string // Linux: "SCHED_OTHER", "SCHED_IDLE", ...; macOS, for the calling process only: "PRIO_DARWIN_BG" or "default"; Windows: the priority class
	IOClass string // Linux: "none", "realtime", "best-effort" or "idle" (ioprio_get(2))
	IOLevel int    // Linux: 0 (highest) to 7 within IOClass
	// Autogroup (Linux) is the process's autogroup (sched(7)), e.g.
	// "/autogroup-42"; "/" for the kernel's default one, that of every
	// process no setsid(2) moved, whose nice value is always 0; "" without
	// CONFIG_SCHED_AUTOGROUP.
	Autogroup     string
	AutogroupNice int // Linux: the autogroup's nice value (/proc/<pid>/autogroup)
	// AppAutogroup (Linux) is true when the process shares the calling
	// process's autogroup: a child not in a new session. Its Nice then
	// weighs against the app's threads within that group, whatever
	// AutogroupNice says (the app's own group, usually at 0).
	AppAutogroup bool
	IOScheduler  string // Linux: each disk's I/O scheduler and what it honours of IOClass and IOLevel

	// Pending lists the steps qos has yet to take for this process after
	// it started (Linux: "autogroup nice 15"); nil when none.
	Pending []string
	// Failed is the error of such a step that failed for this process,
	// also reported (to the Group's OnError, else slog.Default); nil when
	// none failed. It is kept while the process runs.
	Failed error

	// Cgroup (Linux) is the cgroup v2 directory the process runs in; ""
	// when it runs in the hierarchy's root, outside the caller's cgroup
	// namespace, or none is mounted.
	Cgroup string
	// Levers (Linux) are the knobs of qos's cgroup lever that hold the
	// process, read from its tier's cgroup under a Group's Cgroup, e.g.
	// "cpu.weight.nice 15", "io.max 254:0 rbps=43504794 wbps=44518966
	// riops=92 wiops=94"; nil outside one.
	Levers []string
	// Missing (Linux) names, for a process running below the calling
	// process's tier, each part of the cgroup lever it goes without, and
	// how a user gets it, e.g. "I/O lever: the io controller is not
	// delegated to /sys/fs/cgroup/…; …"; nil when none.
	Missing []string

	// Processes and Threads count the process's tree (Linux): the process
	// and every live process below it, and their threads, as /proc lists
	// them. For a command a Group holds, the tree is everything the
	// command started, without qos's own helper processes.
	Processes, Threads int
	// OffTier names each process or thread of the tree that runs above the
	// tree's root (Linux): a lower nice value, SCHED_OTHER below a
	// SCHED_IDLE root, an I/O priority served first, or an autogroup of its
	// own (a session it made) at a lower nice value than the root's, e.g.
	// "pid 4242 (node): own autogroup /autogroup-97 at nice 0". At most 16,
	// then "and N more"; nil when none does.
	OffTier []string
}

// String words a as a status on one line, e.g. "nice 15, SCHED_OTHER, I/O
// best-effort 7, in the app's autogroup /autogroup-41" (a child in the
// app's session: its nice value weighs against the app's threads there, as
// intended) or "..., own autogroup /autogroup-42 at nice 15" (a child in a
// session of its own), then the tree when it has more than the process
// ("; tree: 4 processes, 9 threads") and what runs above the tier. It
// leaves Pid and IOScheduler out.
func (a Applied) String() string {
	parts := []string{fmt.Sprintf("nice %d", a.Nice)}
	if a.Policy != "" {
		parts = append(parts, a.Policy)
	}
	if a.IOClass != "" {
		parts = append(parts, fmt.Sprintf("I/O %s %d", a.IOClass, a.IOLevel))
	}
	switch {
	case a.Autogroup == "":
	case a.AppAutogroup:
		parts = append(parts, "in the app's autogroup "+a.Autogroup)
	default:
		parts = append(parts, fmt.Sprintf("own autogroup %s at nice %d", a.Autogroup, a.AutogroupNice))
	}
	s := strings.Join(parts, ", ")
	if a.Processes > 1 {
		s += fmt.Sprintf("; tree: %d processes, %d threads", a.Processes, a.Threads)
	}
	if len(a.OffTier) > 0 {
		s += "; above the tier: " + strings.Join(a.OffTier, ", ")
	}
	if len(a.Levers) > 0 {
		s += "; cgroup lever: " + strings.Join(a.Levers, ", ")
	}
	if len(a.Missing) > 0 {
		s += "; missing: " + strings.Join(a.Missing, "; ")
	}
	if len(a.Pending) > 0 {
		s += "; pending: " + strings.Join(a.Pending, ", ")
	}
	if a.Failed != nil {
		s += "; failed: " + oneline.Fold(a.Failed.Error())
	}
	return s
}

// Inspect reads back the priorities process pid runs with: on Linux its nice
// value, scheduling policy, I/O class and level, autogroup, the note on the
// disks' I/O schedulers, and its tree of processes, with any that runs
// above it; on macOS the nice value and, for the calling process only (xnu
// answers for no other), whether it is in PRIO_DARWIN_BG; on Windows the
// priority class. Given the cmd.Process.Pid of a command a [Group] holds on
// Linux, it reads the command itself, whose pid is [Applied.Pid]. Elsewhere
// it returns an error wrapping [errors.ErrUnsupported].
func Inspect(pid int) (Applied, error) { return inspect(pid) }

// stepError is the failure of a step qos takes for a command after it
// started (Linux: its move to SCHED_IDLE, its session's autogroup nice
// value). The command kept running, without that step.
type stepError struct {
	path string // the command
	pid  int    // the process the step was for
	step string // e.g. "autogroup nice 15"
	err  error  // what failed, e.g. wrapping syscall.EPERM or syscall.EAGAIN
}

func (e *stepError) Error() string {
	return fmt.Sprintf("qos: %s (pid %d) runs without a step: %s: %v", e.path, e.pid, e.step, e.err)
}

func (e *stepError) Unwrap() error { return e.err }
