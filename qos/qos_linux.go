//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

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
	s := settingFor(t, m)
	if s == (setting{}) {
		return cmd.Start()
	}
	a := cmd.SysProcAttr
	if a != nil && a.Ptrace {
		return fmt.Errorf("qos: start %s: %w", cmd.Path, ErrThreadBound)
	}
	release, err := o.joinCgroup(cmd, s)
	if err != nil {
		return err
	}
	defer release()
	fork := s
	fork.idle = false // a SCHED_IDLE thread that forks can starve for seconds
	if a != nil && a.Pdeathsig != 0 {
		err = startOnSpawner(cmd, fork)
	} else {
		err = runLowered(lowerTo(fork), cmd.Start)
	}
	if err != nil {
		return err
	}
	o.followUp(cmd, s)
	return nil
}

// followUp queues, on the process's pacer, what the forking thread could not
// give the child: SCHED_IDLE, and the nice value of a new session's
// autogroup. The child runs and belongs to the caller from here on: nothing
// that happens to these steps stops it.
func (o Options) followUp(cmd *exec.Cmd, s setting) {
	a := cmd.SysProcAttr
	group := a != nil && (a.Setsid || a.Setctty) && s.nice > 0 && autogroupOn()
	if !s.idle && !group {
		return
	}
	pid := cmd.Process.Pid
	afterStart.add(&followUp{
		child:     openChild(pid),
		start:     startTime(pid),
		nice:      s.nice,
		idle:      s.idle,
		autogroup: group,
		report:    func(err error) { o.report(cmd, err) },
	})
}

// idleProcess moves every thread of process pid to SCHED_IDLE at nice. The
// child has exec'd when cmd.Start returns; threads it made since then came
// from a thread at nice 19 and I/O idle, and are switched here too. A thread
// that an unmoved thread creates while a pass runs copies SCHED_OTHER
// (sched(7): a child thread inherits its creator's policy), so passes repeat
// until two in a row, 5 ms apart, find every thread idle: a thread still
// being cloned copied its creator's policy before the creator was moved but
// shows in /proc/<pid>/task only once the clone completes (kernel/fork.c,
// sched_fork before attach_pid), so one clean pass can miss it (seen by the
// bench's check of every worker thread). Bounded: a process makes threads
// rarely, and moved threads make idle ones. A thread or process that has
// already exited (ESRCH) needs nothing.
func idleProcess(pid, nice int) error {
	s := setting{nice: nice, idle: true}
	clean := 0
	for range 20 {
		tids, err := tasks(pid)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			if attr, err := unix.SchedGetAttr(tid, 0); err == nil && attr.Policy == unix.SCHED_IDLE {
				continue
			}
			if err := s.apply(tid); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			changed = true
		}
		if changed {
			clean = 0
			continue
		}
		if clean++; clean == 2 {
			return nil
		}
		t := time.NewTimer(5 * time.Millisecond)
		<-t.C
	}
	return nil
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
