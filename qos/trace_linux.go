//go:build linux

package qos

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Taking a step at exec. A child that runs even one instruction before it is
// moved to SCHED_IDLE can fork children that keep its old policy for good
// (sched(7): a child inherits its parent's policy), and a thread that forks
// at SCHED_IDLE can wait for seconds under load. So in mode background Start
// forks from a thread at nice 19 with SysProcAttr.Ptrace set: the child
// calls ptrace(PTRACE_TRACEME) right before execve (syscall/exec_linux.go,
// forkAndExecInChild1), and a successful execve sends it SIGTRAP, which it
// takes before its first instruction in the new program (ptrace(2),
// "execve(2) under ptrace"; kernel/signal.c, ptrace_signal). The forking
// thread, its tracer, then moves the one thread the child has to SCHED_IDLE
// and detaches, suppressing the SIGTRAP. Nothing of the program runs before
// the move, so nothing it forks or makes escapes it, and the slow part,
// the fork and the exec, ran at nice 19.
//
// Between PTRACE_TRACEME and the end of execve any signal would stop the
// child for its tracer, and the tracer is then still inside cmd.Start,
// which waits for the exec (CLONE_VFORK): a deadlock. Start therefore
// traces only children in a process group of their own that no terminal
// reaches yet (SysProcAttr.Setsid without Setctty, or Setpgid with Pgid 0,
// without Foreground): no one else knows their pid or group before Start
// returns. Others, a setuid or setgid program (which a tracee runs without
// its privileges, execve(2)), and processes where ptrace is refused (a
// seccomp filter, Yama's ptrace_scope 3, a debugger already tracing this
// process) are forked from a thread at SCHED_IDLE instead.

// cldTrapped is CLD_TRAPPED, the si_code of a traced child's stop
// (include/uapi/asm-generic/siginfo.h); x/sys/unix does not have it.
const cldTrapped = 4

// atExec is what Start does at a traced child's exec, on the forking
// thread, its tracer.
type atExec struct {
	setting    setting
	foreground int      // a tty fd of the child's session to give its group, or -1
	session    *session // the autogroup write to try while the child waits, or nil
}

// stopResult is what happened at the stop.
type stopResult struct {
	stopped bool  // the child was stopped there (false: it died first)
	idle    error // the move to SCHED_IDLE, if one was due
	fg      error // giving the terminal to the child's group, if due
	group   error // the autogroup write, if due: nil, unix.EAGAIN (queued) or a failure
}

// run waits for child pid's stop after exec, takes the steps and detaches.
// A child that exited or was killed first is left for cmd.Wait, which
// reports how (waitid(2) with WNOWAIT takes nothing from it).
func (x atExec) run(pid int) (r stopResult) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT|unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || info.Code != cldTrapped {
			return r
		}
		break
	}
	// Stopped: take the stop's status (a stopped child is not reaped).
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WSTOPPED|unix.WALL|unix.WNOHANG, nil); err != nil {
		return r
	}
	r.stopped = true
	sig := ws.StopSignal()
	if sig == unix.SIGTRAP {
		sig = 0 // the exec's SIGTRAP: not for the program
	}
	defer func() {
		// PTRACE_DETACH with the signal to deliver, or 0.
		_, _, _ = unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(sig), 0, 0)
	}()
	if x.setting.idle {
		r.idle = x.setting.apply(pid) // its only thread: the tid is the pid
	}
	if x.foreground >= 0 {
		r.fg = giveTerminal(x.foreground, pid)
	}
	if x.session != nil {
		r.group = autogroups.now(x.session)
	}
	return r
}

// giveTerminal makes process group pgid the foreground group of the tty
// open as fd (tcsetpgrp(3)). The caller's group is then a background group
// of that terminal, which the kernel would send SIGTTOU for the call unless
// the calling thread blocks it (drivers/tty/tty_jobctrl.c,
// __tty_check_change), so it is blocked on this thread for the call.
func giveTerminal(fd, pgid int) error {
	var set, old unix.Sigset_t
	sigaddset(&set, unix.SIGTTOU)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return fmt.Errorf("qos: block SIGTTOU: %w", err)
	}
	defer func() { _ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil) }()
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, pgid); err != nil {
		return fmt.Errorf("qos: tcsetpgrp(%d, %d): %w", fd, pgid, err)
	}
	return nil
}

// sigaddset adds sig to set (sigsetops(3)).
func sigaddset(set *unix.Sigset_t, sig unix.Signal) {
	bits := uint(64)
	if len(set.Val) == 32 {
		bits = 32
	}
	n := uint(sig - 1)
	set.Val[n/bits] |= 1 << (n % bits)
}
