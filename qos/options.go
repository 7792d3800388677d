package qos

import "os/exec"

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
}

// Start starts cmd, as [exec.Cmd.Start] does, so that the command and every
// thread and process it creates run in tier t under mode m (see [Describe]).
//
// On Linux, nice values and I/O priorities are per thread and a child copies
// them from the thread that clones it, so Start runs cmd.Start on a fresh OS
// thread lowered to the tier, and the Go runtime retires that thread
// afterwards: no thread the application keeps is ever lowered. In mode
// background the child is forked from a thread at nice 19 and I/O idle and
// moved to SCHED_IDLE right after it starts (forking from a SCHED_IDLE thread
// can stall for seconds under load). A child in a new session (Setsid or
// Setctty) gets its own autogroup, in which its nice value no longer competes
// with the GUI; Start sets that autogroup's nice value to the tier's. Without
// CAP_SYS_ADMIN the kernel allows one such write every 100 ms system-wide, so
// Start may wait that long for it (it retries for at most about 1 s). A
// command that sets SysProcAttr.Pdeathsig or Ptrace is refused with
// [ErrThreadBound]. On macOS the command runs under /usr/sbin/taskpolicy
// (Start rewrites cmd.Path and cmd.Args to that end); on Windows its priority
// class is set through SysProcAttr.CreationFlags.
//
// Mode off is cmd.Start. An empty Mode means [ModeUtility]. When Start
// returns an error the command is not running: if a step after the child
// started fails, Start kills the child and waits for it. Start is safe for
// concurrent use; it must not be called twice on one cmd.
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
