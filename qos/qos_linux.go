//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// lowerTo returns the lowerFunc for s. The thread is never put back: a
// lowered nice value cannot be raised again without privilege.
func lowerTo(s setting) lowerFunc {
	return func() (func() error, error) { return nil, s.apply(unix.Gettid()) }
}

// isMainThread reports whether the calling thread is the process's main
// thread, whose thread id is the process id (gettid(2)).
func isMainThread() bool { return unix.Gettid() == unix.Getpid() }

func (o Options) start(cmd *exec.Cmd, t Tier, m Mode) error {
	return o.startAt(cmd, settingFor(t, m), nil)
}

// startExtra is what the holder (holder_linux.go) asks of Start beyond
// Options.Start.
type startExtra struct {
	fg  int    // a terminal fd of the child's session whose foreground group the child's group becomes before it runs; -1: none
	sub string // a cgroup of the child's own under the tier's leaf (with Options.Cgroup), "" for none
	dir string // set by startAt: that cgroup's directory
}

// startAt starts cmd at setting s, with x (nil: nothing extra). Whatever
// Start changes in SysProcAttr is changed in a copy: the caller's is put back
// once the command started.
func (o Options) startAt(cmd *exec.Cmd, s setting, x *startExtra) error {
	if x == nil {
		x = &startExtra{fg: -1}
	}
	fg := x.fg
	caller := cmd.SysProcAttr
	defer func() { cmd.SysProcAttr = caller }()
	pdeath := caller != nil && caller.Pdeathsig != 0
	if s == (setting{}) && fg < 0 {
		if pdeath && !caller.Ptrace {
			return startOnSpawner(cmd, s, cmd.Start) // the signal means the app died, in every mode
		}
		return cmd.Start()
	}
	if caller != nil && caller.Ptrace {
		return fmt.Errorf("qos: start %s: %w", cmd.Path, ErrThreadBound)
	}
	release, dir, err := o.joinCgroup(cmd, s, x.sub)
	if err != nil {
		return err
	}
	defer release()
	x.dir = dir
	p := o.plan(cmd, s, fg)
	if pdeath {
		err = startOnSpawner(cmd, p.fork, p.start(cmd))
	} else {
		err = runLowered(lowerTo(p.fork), p.start(cmd))
	}
	if err != nil {
		return err
	}
	o.after(cmd, p)
	return nil
}

// startPlan is how one Start forks and what it does at the child's exec.
type startPlan struct {
	set   setting   // the tier's
	fork  setting   // the forking thread's
	trace bool      // take the steps at exec (trace_linux.go)
	at    atExec    // those steps
	group bool      // the child's new session gets the tier's autogroup nice
	ag    *followUp // that write, once the child runs
	res   stopResult
}

// plan decides how cmd forks: from a thread at the tier, with the SCHED_IDLE
// move and the autogroup write taken at exec when the child can be traced,
// else from a thread at SCHED_IDLE itself (slower under load: see
// BenchmarkStartUnderLoad), with the autogroup write after Start.
func (o Options) plan(cmd *exec.Cmd, s setting, fg int) *startPlan {
	a := cmd.SysProcAttr
	x := &startPlan{set: s, fork: s, at: atExec{setting: s, foreground: -1}}
	x.group = a != nil && (a.Setsid || a.Setctty) && s.nice > 0 && autogroupOn()
	x.trace = (s.idle || x.group || fg >= 0) && traceable(cmd)
	attr := syscall.SysProcAttr{}
	if a != nil {
		attr = *a // a copy: the caller's may be shared
	}
	switch {
	case x.trace:
		attr.Ptrace = true
		x.fork.idle = false // forked at nice 19; SCHED_IDLE at exec
		x.at.foreground = fg
	case fg >= 0:
		attr.Foreground, attr.Ctty = true, fg // the child takes the terminal itself
	}
	cmd.SysProcAttr = &attr
	return x
}

// start returns the work that runs on the forking thread: cmd.Start, then,
// for a traced child, the steps at its exec, on the same thread (the
// tracer).
func (x *startPlan) start(cmd *exec.Cmd) func() error {
	return func() error {
		if err := cmd.Start(); err != nil {
			return err
		}
		pid := cmd.Process.Pid
		if x.group {
			x.ag = &followUp{child: openPidfd(pid), start: startTime(pid), nice: x.set.nice}
		}
		if !x.trace {
			return nil
		}
		if x.ag != nil {
			x.ag.group, _, _ = autogroup(pid)
			x.at.autogroup = x.ag
		}
		x.res = x.at.run(pid)
		return nil
	}
}

// after reports what failed at exec and queues, on the process's pacer,
// the autogroup write the exec could not take (the kernel's rate limit, or
// a child not traced). The child runs and belongs to the caller from here
// on: nothing that happens to these steps stops it.
func (o Options) after(cmd *exec.Cmd, x *startPlan) {
	pid := cmd.Process.Pid
	report := func(step string, err error) {
		serr := &StepError{Pid: pid, Step: step, Err: err}
		afterStart.mu.Lock()
		afterStart.status.fail(pid, startTime(pid), serr)
		afterStart.mu.Unlock()
		o.report(cmd, serr)
	}
	if x.res.idle != nil {
		report(fmt.Sprintf("SCHED_IDLE, nice %d", x.set.nice), x.res.idle)
	}
	if x.res.fg != nil {
		report("foreground process group", x.res.fg)
	}
	f := x.ag
	if f == nil {
		return
	}
	switch {
	case x.trace && x.res.stopped && x.res.group == nil:
		f.child.close() // written before the child ran
		return
	case x.trace && x.res.stopped && !errors.Is(x.res.group, unix.EAGAIN):
		f.child.close()
		report(f.stepName(), x.res.group)
		return
	}
	if f.group == "" {
		f.group, _, _ = autogroup(pid)
	}
	f.report = func(err error) { o.report(cmd, err) }
	afterStart.add(f)
}

func (o Options) do(t Tier, m Mode, fn func()) error {
	s := settingFor(t, m)
	if s == (setting{}) {
		fn()
		return nil
	}
	return runLowered(lowerTo(s), func() error { fn(); return nil })
}

// enterServing sets I/O best-effort 7 on every thread of this process. A
// thread created meanwhile copies the priority of the thread that created it,
// which may not have been lowered yet, so the pass repeats until it changes
// nothing (bounded: threads are created rarely).
func (o Options) enterServing() error {
	s := settingFor(Serving, ModeUtility)
	for range 10 {
		tids, err := tasks(os.Getpid())
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			c, l, err := effectiveIOPrio(tid)
			if errors.Is(err, unix.ESRCH) || err == nil && ioRank(c, l) >= ioRank(s.ioClass, s.ioLevel) {
				continue
			}
			if err := s.apply(tid); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}
