package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/offmain/offmain/qos"
	"golang.org/x/sys/unix"
)

// threadTier is what one thread runs at: nice and policy from
// /proc/<pid>/task/<tid>/stat (fields 19 and 41, proc_pid_stat(5)), the raw
// I/O priority from ioprio_get(2).
type threadTier struct {
	nice, policy, ioprio int
}

func (t threadTier) String() string {
	pol := map[int]string{unix.SCHED_NORMAL: "SCHED_OTHER", unix.SCHED_BATCH: "SCHED_BATCH", unix.SCHED_IDLE: "SCHED_IDLE"}[t.policy]
	if pol == "" {
		pol = "policy " + strconv.Itoa(t.policy)
	}
	class := map[int]string{0: "none", 1: "realtime", 2: "best-effort", 3: "idle"}[t.ioprio>>ioprioClassShift]
	return fmt.Sprintf("nice %d, %s, I/O %s %d", t.nice, pol, class, t.ioprio&(1<<ioprioClassShift-1))
}

// parseThreadTier reads fields 19 and 41 of a stat line.
func parseThreadTier(stat string) (threadTier, error) {
	var t threadTier
	i := strings.LastIndexByte(stat, ')')
	f := strings.Fields(stat[i+1:])
	if i < 0 || len(f) < 41-2 {
		return t, fmt.Errorf("unexpected stat %q", stat)
	}
	var err1, err2 error
	t.nice, err1 = strconv.Atoi(f[19-3])
	t.policy, err2 = strconv.Atoi(f[41-3])
	return t, errors.Join(err1, err2)
}

// readThreadTier reads thread tid of pid; ok is false when it has exited.
func readThreadTier(pid, tid int) (t threadTier, ok bool, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	if t, err = parseThreadTier(string(b)); err != nil {
		return t, false, err
	}
	r, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(tid), 0)
	if e == unix.ESRCH {
		return t, false, nil
	}
	if e != 0 {
		return t, false, fmt.Errorf("ioprio_get(%d): %w", tid, e)
	}
	t.ioprio = int(r)
	return t, true, nil
}

// expected is what every thread of an arm's workers must run at.
type expected struct {
	tier      threadTier
	agNice    int  // the autogroup's nice
	ownAG     bool // in an autogroup of its own, not the bench's
	threads   int  // threads checked so far, over all rounds
	processes int  // processes checked so far: the workers and all they started
	workers   int
	cgroup    string // cgroup arms: the agents' cgroup and its I/O knobs, as read back last
}

// checkApplied reads back every thread of every process of every worker's
// tree (the worker and what it started, found in /proc) of arm a and fails
// when one is off the arm's tier. The tier is what the arm asks for
// (armTier) or, for the arms that go through qos.Start, what the first
// worker's first thread runs at, which must then be lower than the bench:
// the bench checks that qos applied one tier to every thread, not which.
func (b *bench) checkApplied(a arm) error {
	for _, w := range b.pool.workers {
		tree, err := processTree(w.cmd.Process.Pid)
		if err != nil {
			return err
		}
		for _, pid := range tree {
			if err := b.checkProcess(a, w.mode, pid); err != nil {
				return err
			}
		}
		if a.kind == armCgroup {
			note, err := b.pool.cg.check(a, w.cmd.Process.Pid)
			if err != nil {
				return err
			}
			b.applied[a.name].cgroup = note
		}
		b.applied[a.name].workers++
	}
	return nil
}

// checkProcess checks every thread of process pid of a worker's tree. A
// process that exited since the tree was read is skipped.
func (b *bench) checkProcess(a arm, mode string, pid int) error {
	ag, err := qos.Inspect(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s worker's process %d: %w", mode, pid, err)
	}
	tids, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range tids {
		tid, _ := strconv.Atoi(e.Name())
		t, ok, err := readThreadTier(pid, tid)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		if err := b.expect(a, mode, pid, tid, t, ag); err != nil {
			return err
		}
	}
	b.applied[a.name].processes++
	return nil
}

// processTree returns root and every process below it, parents first, from
// the parent pids in /proc/<pid>/stat (field 4, proc_pid_stat(5)).
func processTree(root int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if i < 0 || len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[4-3])
		kids[ppid] = append(kids[ppid], pid)
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, kids[tree[i]]...)
	}
	return tree, nil
}

// expect checks one thread against the arm's tier, fixing the tier at the
// first thread seen for the arms whose tier qos decides.
func (b *bench) expect(a arm, mode string, pid, tid int, t threadTier, ag qos.Applied) error {
	ex := b.applied[a.name]
	if ex == nil {
		ex = &expected{tier: t, agNice: ag.AutogroupNice, ownAG: ag.Autogroup != b.ownAG}
		if want, ok := armTier(a, b.own); ok {
			ex.tier = want
		} else if t.nice <= b.own.nice && t.policy != unix.SCHED_IDLE {
			return fmt.Errorf("arm %s: %s worker tree's process %d thread %d runs at %s, no lower than the bench (%s)", a.name, mode, pid, tid, t, b.own)
		}
		ex.agNice, ex.ownAG = wantAutogroup(a, t, ex)
		b.applied[a.name] = ex
	}
	ex.threads++
	got := ag.Autogroup != b.ownAG
	if t != ex.tier || got != ex.ownAG || (ag.Autogroup != "" && ag.AutogroupNice != ex.agNice) {
		return fmt.Errorf("arm %s: %s worker tree's process %d thread %d is off-tier: %s, autogroup %s nice %d; want %s, own autogroup %v nice %d",
			a.name, mode, pid, tid, t, ag.Autogroup, ag.AutogroupNice, ex.tier, ex.ownAG, ex.agNice)
	}
	return nil
}

// armTier is the tier the exploratory arms set themselves (lowerSelf) and
// the default arm inherits: known without reading a worker.
func armTier(a arm, own threadTier) (threadTier, bool) {
	switch a.kind {
	case armDefault:
		return own, true
	case armNice:
		return threadTier{nice: a.nice, policy: own.policy, ioprio: own.ioprio}, true
	case armIdleClass:
		return threadTier{nice: own.nice, policy: unix.SCHED_IDLE, ioprio: own.ioprio}, true
	}
	return threadTier{}, false
}

// wantAutogroup says where a worker's autogroup must be: setsid and
// setsid-fix in one of their own, at nice 0 without the fix and at the
// tier's nice with it; every other arm in the bench's.
func wantAutogroup(a arm, t threadTier, ex *expected) (nice int, own bool) {
	switch a.kind {
	case armSetsid:
		return 0, true
	case armSetsidFix:
		return t.nice, true
	}
	return ex.agNice, false
}

func (e *expected) String() string {
	ag := "the bench's autogroup"
	if e.ownAG {
		ag = fmt.Sprintf("own autogroup nice %d", e.agNice)
	}
	s := fmt.Sprintf("%s, %s (%d workers, %d processes, %d threads)", e.tier, ag, e.workers, e.processes, e.threads)
	if e.cgroup != "" {
		s += ", " + e.cgroup
	}
	return s
}
