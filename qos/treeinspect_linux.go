//go:build linux

package qos

import (
	"fmt"
	"os"
	"strconv"
)

// maxOffTier bounds Applied.OffTier; the rest are counted.
const maxOffTier = 16

// tierRef is what a process of a tree is compared with: the tree's root's
// main thread.
type tierRef struct {
	nice, policy   int
	ioRank         int
	group, appName string // the root's autogroup and the app's
}

// inspectTree fills a's Processes, Threads and OffTier with the live
// processes below below (the holder of a held command) or, when below is
// root, root and the processes below it. Each thread is compared with
// root's main thread: one with a lower nice value, a policy other than
// SCHED_IDLE where the root has it, or an I/O priority served before the
// root's, runs above the tree's tier; so does a process in a new autogroup
// (a session it made) at a lower nice value than the root's, in the root
// task group. A tree read while processes come and go is as of the moment
// each was read.
func inspectTree(a *Applied, root, below int) {
	ref, ok := refOf(root)
	if !ok {
		return
	}
	procs, err := allProcs()
	if err != nil {
		return
	}
	tree := descendants(procs, below)
	if below == root {
		if p, ok := readProc(root); ok {
			tree = append([]proc{p}, tree...)
		}
	}
	more := 0
	note := func(s string) {
		if len(a.OffTier) < maxOffTier {
			a.OffTier = append(a.OffTier, s)
		} else {
			more++
		}
	}
	for _, p := range tree {
		if p.live() {
			a.Processes++
			a.Threads += inspectProc(p, ref, note)
		}
	}
	if more > 0 {
		a.OffTier = append(a.OffTier, fmt.Sprintf("and %d more", more))
	}
}

// inspectProc notes how p, or a thread of it, runs above ref, and returns
// how many threads it read.
func inspectProc(p proc, ref tierRef, note func(string)) (threads int) {
	if name, nice, err := autogroup(p.pid); err == nil && name != ref.group && name != ref.appName &&
		name != rootAutogroup && nice < ref.nice && rootTaskGroup(p.pid) {
		note(fmt.Sprintf("%v: own autogroup %s at nice %d", p, name, nice))
	}
	tids, err := tasks(p.pid)
	if err != nil {
		return 0
	}
	for _, tid := range tids {
		t, ok := threadTier(p.pid, tid)
		if !ok {
			continue
		}
		threads++
		if why := t.above(ref); why != "" {
			who := p.String()
			if tid != p.pid {
				who += " thread " + strconv.Itoa(tid)
			}
			note(who + ": " + why)
		}
	}
	return threads
}

// refOf reads root's main thread and autogroup.
func refOf(root int) (tierRef, bool) {
	t, ok := threadTier(root, root)
	if !ok {
		return tierRef{}, false
	}
	t.group, _, _ = autogroup(root)
	t.appName, _, _ = autogroup(os.Getpid())
	return t, true
}

// threadTier reads thread tid of process pid.
func threadTier(pid, tid int) (tierRef, bool) {
	p, err := readThread(pid, tid)
	if err != nil {
		return tierRef{}, false
	}
	class, level, err := effectiveIOPrio(tid)
	if err != nil {
		return tierRef{}, false
	}
	return tierRef{nice: p.nice, policy: p.policy, ioRank: ioRank(class, level)}, true
}

// above says how t runs above ref, or "" if it does not.
func (t tierRef) above(ref tierRef) string {
	switch {
	case t.nice < ref.nice:
		return fmt.Sprintf("nice %d, the tree's root %d", t.nice, ref.nice)
	case ref.policy == 5 && t.policy != 5: // SCHED_IDLE, include/uapi/linux/sched.h
		return fmt.Sprintf("%s, the tree's root SCHED_IDLE", policyName(t.policy))
	case t.ioRank < ref.ioRank:
		return "I/O served before the tree's root's"
	}
	return ""
}

func policyName(p int) string {
	if n := policyNames[p]; n != "" {
		return n
	}
	return "policy " + strconv.Itoa(p)
}
