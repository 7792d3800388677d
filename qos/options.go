package qos

import (
	"log/slog"
	"os/exec"
)

// Options adjusts Start, Do and EnterServing. The zero Options is the
// default everywhere; the package-level [Start], [Do] and [EnterServing] use
// it. An Options value is only read, so one value is safe for concurrent use.
type Options struct {
	// Strict makes Start, Do and EnterServing return an error wrapping
	// errors.ErrUnsupported, without starting the command or running fn, on
	// platforms where this package cannot apply a tier (all but Linux,
	// macOS and Windows). Zero: on those platforms the command starts and fn
	// runs unchanged, and the calls return nil.
	Strict bool

	// Cgroup (Linux only) is a cgroup v2 directory delegated to this process,
	// with the cpu controller available: Start puts each lowered child
	// straight into a leaf under it (clone3 CLONE_INTO_CGROUP through
	// SysProcAttr.UseCgroupFD), a leaf with cpu.idle 1 for SCHED_IDLE tiers
	// and cpu.weight.nice set to the tier's nice value otherwise. A cgroup's
	// weight competes with the GUI's cgroup whatever the session, where the
	// thread method alone is undone by autogroup for children that call
	// setsid themselves. The thread method is still applied inside the leaf
	// (the I/O priority has no cgroup v2 equivalent without the io controller).
	// If the cgroup cannot be prepared, Start returns an error and starts
	// nothing. A command whose SysProcAttr.UseCgroupFD is already set keeps
	// its own cgroup. Zero: no cgroup, the thread method alone.
	Cgroup string

	// OnError, if set, is called with a [*StepError] for each step that
	// Start could apply only after the child started (Linux: SCHED_IDLE, an
	// autogroup's nice value) and that failed, with the command Start was
	// given. It runs on the goroutine that applies those steps for the
	// whole process, so it must not block for long. The child keeps
	// running: it is the caller's from the moment Start returns nil. A
	// child that exits before its step runs is not a failure. Nil means
	// failures are only logged (Logger) and shown by [Inspect].
	OnError func(cmd *exec.Cmd, err error)

	// Logger, if set, gets one Warn record for each such failure. Nil
	// means [slog.Default] when OnError is nil too, and nothing otherwise.
	Logger *slog.Logger
}

// Start starts cmd, as [exec.Cmd.Start] does, so that the command and every
// thread and process it creates run in tier t under mode m (see [Describe]).
//
// On Linux, nice values and I/O priorities are per thread and a child copies
// them from the thread that clones it, so Start runs cmd.Start on a fresh OS
// thread lowered to the tier, and the Go runtime retires that thread
// afterwards: no thread the application keeps is ever lowered. In mode
// background the child must also be at SCHED_IDLE before its first
// instruction, or what it forks at once keeps SCHED_OTHER: a child in a
// process group of its own (SysProcAttr.Setpgid or Setsid, as a [Group]
// gives every command) is forked at nice 19 and moved to SCHED_IDLE while it
// waits at its exec, under ptrace; any other is forked from a thread at
// SCHED_IDLE, which under load makes Start slower (BenchmarkStartGroup; the
// package documentation has the figures). A child in a new session (Setsid
// or Setctty) gets its own autogroup, in which its nice value no longer
// competes with the GUI, and Start writes the tier's nice value to it: at
// the exec for a traced child, else, and when the kernel refuses the write
// (without CAP_SYS_ADMIN it takes one autogroup write every 100 ms for the
// whole system), on one goroutine for the whole process, which writes
// through any member of the session still running. [Inspect] shows a step
// still pending or failed; failures go to [Options.OnError] and
// [Options.Logger].
//
// SysProcAttr.Pdeathsig is honoured on Linux in every mode: the signal
// means "the app died" (an exit, a crash, SIGKILL), not "the starting
// thread ended". Such a command is forked from a thread kept for its fork
// setting while any child it started runs (prctl(2): the parent-death
// signal follows the creating thread), so it is started after the ones
// queued before it: under CPU load this made Start slower than the fresh
// thread other commands get (BenchmarkStartPdeathsig). SysProcAttr.Ptrace
// is refused with [ErrThreadBound] unless the mode is off. On macOS the
// command runs under /usr/sbin/taskpolicy; on Windows its priority class is
// set through SysProcAttr.CreationFlags. Whatever Start changes in
// SysProcAttr it changes in a copy, and cmd.SysProcAttr is the caller's
// again when Start returns.
//
// Mode off is cmd.Start (from the kept thread for a Pdeathsig command). An
// empty Mode means [ModeUtility]. Start returns an error only when the
// command did not start; once it started, Start returns nil and the caller
// owns a running command, whatever happens to the steps queued after it.
// Start is safe for concurrent use; it must not be called twice on one cmd.
func (o Options) Start(cmd *exec.Cmd, t Tier, m Mode) error {
	m, err := m.check("the mode passed to Start")
	if err != nil {
		return err
	}
	if err := t.check(); err != nil {
		return err
	}
	return o.start(cmd, t, m)
}

// Do runs fn on one OS thread lowered to tier t under mode m and returns when
// fn returns. On Linux the thread is a fresh one that the Go runtime retires
// after fn (a nice value cannot be raised back without privilege), so no
// thread of the process stays lowered; on macOS and Windows the thread is
// put back. Goroutines that fn starts run on other, unlowered threads. A
// panic in fn is raised again in the caller of Do. Mode off runs fn on the
// calling goroutine. Do returns an error, without running fn, only if the
// thread could not be lowered. Do is safe for concurrent use.
//
// fn must not hold a lock that interactive work also takes (a mutex, a file
// lock, a database transaction): the GUI would wait behind a thread that
// now runs at the lowest priority, a priority inversion the tier itself
// creates. Copy what the pass needs under the lock, release it, then Do the
// slow part (see the example). On a 2-core Linux VM with four busy loops at
// nice 0, a Lock waiting for a holder with 1 ms of work left took p95 8-9 ms
// with the holder at normal priority, 0.9-1.8 s at nice 19 (utility) and
// 2.6-4.4 s, up to 8 s, at SCHED_IDLE (background):
// go test -run '^$' -bench LockBehindLoweredHolder -benchtime 40x ./qos/
func (o Options) Do(t Tier, m Mode, fn func()) error {
	m, err := m.check("the mode passed to Do")
	if err != nil {
		return err
	}
	if err := t.check(); err != nil {
		return err
	}
	return o.do(t, m, fn)
}

// EnterServing applies the Serving tier to the calling process, as a daemon
// the GUI waits on does once at start: on Linux, I/O best-effort level 7 on
// every thread in /proc/self/task (threads created later copy it), with the
// CPU priority unchanged; on macOS, disk I/O policy IOPOL_UTILITY for the
// process; on Windows, nothing. Mode off applies nothing.
func (o Options) EnterServing(m Mode) error {
	m, err := m.check("the mode passed to EnterServing")
	if err != nil || m == ModeOff {
		return err
	}
	return o.enterServing()
}
