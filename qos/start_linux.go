//go:build linux

package qos

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// startOpts is what a start takes beyond the command and its setting.
type startOpts struct {
	cgroup string      // Group.Cgroup: the delegated cgroup of the lever, or ""
	sub    string      // a cgroup of the command's own under the tier's leaf, or ""
	fg     int         // a terminal fd whose foreground group the command's group becomes before it runs; -1: none
	report func(error) // where a step that failed after the command started goes
	// ptrace tells whether a child may call PTRACE_TRACEME here; nil:
	// ptraceUsable. The holder is told the app's answer.
	ptrace func() bool
	// fork starts cmd and returns its pid; nil: cmd.Start. The holder
	// forks with syscall.ForkExec (see forkExec).
	fork  func(cmd *exec.Cmd) (pid int, err error)
	leaf  string // set by startAt: the tier's leaf cgroup, or ""
	dir   string // set by startAt: the command's cgroup (leaf, or sub in it), or ""
	pid   int    // set by startAt: the command's pid
	lever error  // set by startAt: why leaf could not get the I/O lever, or nil
}

// start forks cmd as o says and notes its pid.
func (o *startOpts) start(cmd *exec.Cmd) error {
	if o.fork != nil {
		pid, err := o.fork(cmd)
		o.pid = pid
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	o.pid = cmd.Process.Pid
	return nil
}

// startAt starts cmd at setting s. Whatever it changes in SysProcAttr it
// changes in a copy: the caller's is put back once the command started.
func startAt(cmd *exec.Cmd, s setting, o *startOpts) error {
	caller := cmd.SysProcAttr
	defer func() { cmd.SysProcAttr = caller }()
	pdeath := caller != nil && caller.Pdeathsig != 0
	if s == (setting{}) && o.fg < 0 {
		if pdeath && !caller.Ptrace {
			return startOnSpawner(cmd, s, func() error { return o.start(cmd) }) // the signal means the app died, in every mode
		}
		return o.start(cmd)
	}
	if caller != nil && caller.Ptrace {
		return fmt.Errorf("qos: start %s: SysProcAttr.Ptrace is tied to the starting thread, which Start retires", cmd.Path)
	}
	release, err := o.joinCgroup(cmd, s)
	if err != nil {
		return err
	}
	defer release()
	p := plan(cmd, s, o)
	if pdeath {
		err = startOnSpawner(cmd, p.fork, p.start(cmd, o))
	} else {
		err = runLowered(lowerTo(p.fork), p.start(cmd, o))
	}
	if err != nil {
		return dirError(cmd, err)
	}
	p.after(cmd, o.pid, o.report)
	return nil
}

// dirError is err, the failed start of cmd, or, when cmd.Dir is what is
// missing, the error os.StartProcess gives for that without a SysProcAttr
// (chdir <dir>: ...) rather than one naming the command's path, which
// exists. A Chroot makes Dir the chroot's, which is left alone.
func dirError(cmd *exec.Cmd, err error) error {
	var pe *fs.PathError
	if cmd.Dir == "" || !errors.As(err, &pe) || pe.Op != "fork/exec" ||
		cmd.SysProcAttr != nil && cmd.SysProcAttr.Chroot != "" {
		return err
	}
	if _, serr := os.Stat(cmd.Dir); serr != nil {
		if dpe, ok := serr.(*fs.PathError); ok {
			dpe.Op = "chdir"
			return dpe
		}
	}
	return err
}

// startPlan is how one start forks and what it does at the child's exec.
type startPlan struct {
	set     setting // the tier's
	fork    setting // the forking thread's
	trace   bool    // take the steps at exec (trace_linux.go)
	at      atExec  // those steps
	session bool    // the child's new session gets the tier's autogroup nice
	res     stopResult
}

// plan decides how cmd forks: from a thread at the tier, with the SCHED_IDLE
// move and the autogroup write taken at exec when the child can be traced,
// else from a thread at SCHED_IDLE itself (slower under load), with the
// autogroup write after start.
func plan(cmd *exec.Cmd, s setting, o *startOpts) *startPlan {
	a := cmd.SysProcAttr
	x := &startPlan{set: s, fork: s, at: atExec{setting: s, foreground: -1}}
	x.session = a != nil && (a.Setsid || a.Setctty) && s.nice > 0 && autogroupOn()
	usable := o.ptrace
	if usable == nil {
		usable = ptraceUsable
	}
	x.trace = (s.idle || x.session || o.fg >= 0) && traceable(cmd) && usable()
	attr := syscall.SysProcAttr{}
	if a != nil {
		attr = *a // a copy: the caller's may be shared
	}
	switch {
	case x.trace:
		attr.Ptrace = true
		x.fork.idle = false // forked at nice 19; SCHED_IDLE at exec
		x.at.foreground = o.fg
	case o.fg >= 0:
		attr.Foreground, attr.Ctty = true, o.fg // the child takes the terminal itself
	}
	cmd.SysProcAttr = &attr
	return x
}

// start returns the work that runs on the forking thread: the fork, then,
// for a traced child, the steps at its exec, on the same thread (the
// tracer).
func (x *startPlan) start(cmd *exec.Cmd, o *startOpts) func() error {
	return func() error {
		if err := o.start(cmd); err != nil {
			return err
		}
		pid := o.pid
		if x.session {
			x.at.session = newSession(pid, pid, x.set.nice, cmd.Path)
		}
		if x.trace {
			x.res = x.at.run(pid)
		}
		return nil
	}
}

// after reports what failed at exec and queues, on the process's pacer,
// the autogroup write the exec could not take (the kernel's rate limit, or
// a child not traced). The child runs and belongs to the caller from here
// on: nothing that happens to these steps stops it.
func (x *startPlan) after(cmd *exec.Cmd, pid int, report func(error)) {
	fail := func(step string, err error) {
		serr := &stepError{path: cmd.Path, pid: pid, step: step, err: err}
		autogroups.fail(pid, startTime(pid), serr)
		report(serr)
	}
	if x.res.idle != nil {
		fail(fmt.Sprintf("SCHED_IDLE, nice %d", x.set.nice), x.res.idle)
	}
	if x.res.fg != nil {
		fail("foreground process group", x.res.fg)
	}
	s := x.at.session
	switch {
	case s == nil:
	case x.trace && x.res.stopped && x.res.group == nil: // written before the child ran
	case x.trace && x.res.stopped && !errors.Is(x.res.group, unix.EAGAIN):
		fail(s.step(), x.res.group)
	default:
		s.report = report
		autogroups.add(s)
	}
}

// ptraceUsable reports whether a child of this process may call
// PTRACE_TRACEME, found once by forking a child that does and then fails
// its exec on a path that does not exist: ENOENT says it got that far.
var ptraceUsable = sync.OnceValue(func() bool {
	_, err := syscall.ForkExec("/nonexistent/offmain-qos-ptrace-probe", nil,
		&syscall.ProcAttr{Sys: &syscall.SysProcAttr{Ptrace: true}})
	return errors.Is(err, syscall.ENOENT)
})

// traceable reports whether start may take its steps at cmd's exec (see
// trace_linux.go): a child in a process group of its own that no terminal
// reaches yet, and no program that gains privileges at exec.
func traceable(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	if a == nil || a.Foreground || a.Ptrace {
		return false
	}
	fresh := a.Setsid && !a.Setctty || !a.Setsid && a.Setpgid && a.Pgid == 0
	return fresh && !privileged(cmd.Path)
}

// privileged reports whether path gains privileges at exec: setuid,
// setgid, or file capabilities (capabilities(7)). An unreadable path counts
// as privileged; its exec fails or runs unprivileged either way.
func privileged(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		return true
	}
	n, err := unix.Getxattr(path, "security.capability", nil)
	return err == nil && n > 0
}
