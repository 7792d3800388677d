//go:build linux

package qos

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/oneline"
)

// Scheduling policies by number, from include/uapi/linux/sched.h.
var policyNames = map[int]string{
	0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH",
	5: "SCHED_IDLE", 6: "SCHED_DEADLINE", 7: "SCHED_EXT",
}

// What each block-layer I/O scheduler makes of an I/O priority. mq-deadline
// keeps one queue a class and ignores the level (block/mq-deadline.c,
// dd_rq_ioclass); BFQ weighs class and level (block/bfq-iosched.c); none and
// kyber ignore both. What that buys is in bench/README.md.
var schedulerNotes = map[string]string{
	"mq-deadline": "honours the I/O class only (best-effort 7 acts as 4; the idle class helps)",
	"bfq":         "honours I/O class and level",
	"none":        "ignores I/O priority",
	"kyber":       "ignores I/O priority",
}

func inspect(pid int) (Applied, error) {
	root, below := pid, pid
	if holder, agent, ok := heldBy(pid); ok {
		root, below = agent, holder // a Group's keeper: read its command, and the tree below the holder
	}
	a, err := inspectThread(root, root)
	if err != nil {
		return a, err
	}
	a.Pid = root
	a.IOScheduler = ioSchedulers()
	if own, _, err := autogroup(os.Getpid()); err == nil && a.Autogroup != "" {
		a.AppAutogroup = own == a.Autogroup
	}
	for _, p := range []int{pid, root} {
		if start := startTime(p); start != 0 {
			pending, failed := autogroups.lookup(p, start)
			a.Pending = append(a.Pending, pending...)
			a.Failed = oneline.Join(a.Failed, failed)
		}
		if root == pid {
			break
		}
	}
	// Below the app's tier: a higher nice value than the app's, or
	// SCHED_IDLE where the app is not.
	own, err := readThread(os.Getpid(), os.Getpid())
	lowered := err == nil && (a.Nice > own.nice || a.Policy == "SCHED_IDLE" && own.policy != unix.SCHED_IDLE)
	cgroupLevers(&a, root, lowered)
	inspectTree(&a, root, below)
	return a, nil
}

// inspectThread reads thread tid of process pid: nice value and policy from
// /proc/pid/task/tid/stat, the I/O priority from ioprio_get(2) and the
// process's autogroup.
func inspectThread(pid, tid int) (Applied, error) {
	var a Applied
	t, err := readThread(pid, tid)
	if err != nil {
		return a, err
	}
	a.Nice, a.Policy = t.nice, policyName(t.policy)
	class, level, err := ioPrio(tid)
	if err != nil {
		return a, err
	}
	a.IOClass, a.IOLevel = ioClassNames[class&3], level
	a.Autogroup, a.AutogroupNice, err = autogroup(pid)
	if errors.Is(err, os.ErrNotExist) {
		err = nil // kernel without CONFIG_SCHED_AUTOGROUP
	}
	return a, err
}

// ioSchedulers describes the active I/O scheduler of each disk that has a
// device behind it (loop and other virtual devices have none), e.g.
// "vda: mq-deadline honours the I/O class only (best-effort 7 acts as 4)".
func ioSchedulers() string {
	devs, _ := filepath.Glob("/sys/block/*/device")
	var notes []string
	for _, d := range devs {
		dir := filepath.Dir(d)
		b, err := os.ReadFile(filepath.Join(dir, "queue", "scheduler"))
		if err != nil {
			continue
		}
		name := activeScheduler(string(b))
		note := schedulerNotes[name]
		if note == "" {
			note = "unknown to this package"
		}
		notes = append(notes, filepath.Base(dir)+": "+name+" "+note)
	}
	if len(notes) == 0 {
		return "no disk found under /sys/block"
	}
	sort.Strings(notes)
	return strings.Join(notes, "; ")
}

// activeScheduler picks the bracketed name from a queue/scheduler line such
// as "none [mq-deadline] kyber bfq" (Documentation/block/switching-sched.rst).
func activeScheduler(line string) string {
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "[") {
			return strings.Trim(f, "[]")
		}
	}
	return strings.TrimSpace(line)
}
