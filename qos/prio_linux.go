//go:build linux

package qos

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// I/O priority encoding, from include/uapi/linux/ioprio.h: the class sits in
// the bits above IOPRIO_CLASS_SHIFT, the level (0 highest, 7 lowest) in the
// low IOPRIO_LEVEL_NR_BITS, and since Linux 6.5 an I/O hint in the bits
// between, which is not part of the level. x/sys/unix has the syscall
// numbers but no wrapper and no constants.
const (
	ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS: "who" is a thread id
	ioprioClassShift = 13
	ioprioLevelMask  = 1<<3 - 1 // IOPRIO_LEVEL_MASK
	ioprioClassNone  = 0
	ioprioClassRT    = 1
	ioprioClassBE    = 2
	ioprioClassIdle  = 3
)

var ioClassNames = [...]string{"none", "realtime", "best-effort", "idle"}

// setting is what one (tier, mode) pair does to a Linux thread. The zero
// setting changes nothing.
type setting struct {
	nice    int  // nice value to lower to; 0 leaves the CPU priority alone
	idle    bool // SCHED_IDLE (sched(7)); nice is set as well, see setIdle
	ioClass int  // ioprioClassBE or ioprioClassIdle; 0 leaves I/O alone
	ioLevel int  // level within ioClass
}

// utilityNice is the Agent tier's nice value in mode utility: the smallest
// demotion that kept a GUI-like thread's burst latency within twice an idle
// machine's beside CPU, disk and metadata load in the bench (`go run ./bench
// -arms idle,default,agent,nice:10,nice:15,nice:19,background`; the figures,
// and what it costs the agents, are in bench/README.md). Android's
// THREAD_PRIORITY_BACKGROUND and Chromium's background thread type are nice
// 10, which missed that goal there. With the GUI idle, an agent gets all
// the spare CPU.
const utilityNice = 15

// settingFor is the Linux column of the policy table in qos.go.
func settingFor(t Tier, m Mode) setting {
	switch {
	case m == ModeOff:
		return setting{}
	case t == Serving:
		return setting{ioClass: ioprioClassBE, ioLevel: 7}
	case t == Agent && m == ModeUtility:
		return setting{nice: utilityNice, ioClass: ioprioClassBE, ioLevel: 7}
	case t == Agent:
		return setting{nice: 19, idle: true, ioClass: ioprioClassIdle}
	}
	return setting{nice: 19, idle: m == ModeBackground, ioClass: ioprioClassIdle}
}

// String words s as the policy table does.
func (s setting) String() string {
	cpu := "CPU unchanged"
	switch {
	case s.idle:
		cpu = fmt.Sprintf("SCHED_IDLE, nice +%d", s.nice)
	case s.nice != 0:
		cpu = fmt.Sprintf("nice +%d", s.nice)
	}
	io := "I/O unchanged"
	switch s.ioClass {
	case ioprioClassBE:
		io = fmt.Sprintf("I/O best-effort %d", s.ioLevel)
	case ioprioClassIdle:
		io = "I/O idle"
	}
	return strings.Join([]string{cpu, io}, " and ")
}

// apply lowers thread tid to s. Each step only lowers: a thread already
// below s on some axis stays there (a process started under `nice -n 10`,
// `ionice -c3` or `chrt --idle 0` is not raised). The I/O priority comes
// first: a thread without an I/O class is served by its CPU priority (see
// effectiveIOPrio), which the later steps lower.
func (s setting) apply(tid int) error {
	if s.ioClass != 0 {
		if err := lowerIOPrio(tid, s.ioClass, s.ioLevel); err != nil {
			return err
		}
	}
	if s.idle {
		if err := setIdle(tid, s.nice); err != nil {
			return err
		}
	}
	if s.nice != 0 {
		return lowerNice(tid, s.nice)
	}
	return nil
}

// threadNice returns the nice value of thread tid. The raw getpriority(2)
// syscall returns 20-nice ("C library/kernel differences" in the man page).
func threadNice(tid int) (int, error) {
	p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return 0, fmt.Errorf("qos: getpriority(%d): %w", tid, err)
	}
	return 20 - p, nil
}

// lowerNice sets thread tid's nice value to nice unless it is already at or
// above it. With PRIO_PROCESS and a thread id, setpriority(2) changes that
// one thread on Linux (the man page's BUGS: "the nice value is a per-thread
// attribute").
func lowerNice(tid, nice int) error {
	cur, err := threadNice(tid)
	if err != nil || cur >= nice {
		return err
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil {
		return fmt.Errorf("qos: setpriority(%d, %d): %w", tid, nice, err)
	}
	return nil
}

// setIdle moves thread tid to SCHED_IDLE. sched_setattr(2) is given the nice
// value too, but on kernel 6.18 it was ignored for SCHED_IDLE (the thread
// stayed at nice 0, and so did its children: measured on a 2-core VM), so callers
// set the nice value with setpriority as well (apply does).
func setIdle(tid, nice int) error {
	attr := unix.SchedAttr{Policy: unix.SCHED_IDLE, Nice: int32(nice)}
	if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
		return fmt.Errorf("qos: sched_setattr(%d, SCHED_IDLE): %w", tid, err)
	}
	return nil
}

// ioPrio returns thread tid's I/O class and level (ioprio_get(2)).
func ioPrio(tid int) (class, level int, err error) {
	r, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(tid), 0)
	if errno != 0 {
		return 0, 0, fmt.Errorf("qos: ioprio_get(%d): %w", tid, errno)
	}
	return int(r) >> ioprioClassShift, int(r) & ioprioLevelMask, nil
}

// effectiveIOPrio returns the I/O class and level thread tid is served with,
// for ranking. A thread in class none is served by its CPU priority: BFQ
// derives the class and level from it (block/bfq-iosched.c,
// bfq_set_next_ioprio_data; include/linux/ioprio.h, task_nice_ioclass and
// task_nice_ioprio): SCHED_IDLE as idle, realtime and deadline as realtime,
// others as best-effort at level (nice+20)/5. mq-deadline serves class none
// as best-effort (block/mq-deadline.c, ioprio_class_to_prio), where every
// level is alike, so ranking it as BFQ does never raises a thread there.
func effectiveIOPrio(tid int) (class, level int, err error) {
	class, level, err = ioPrio(tid)
	if err != nil || class != ioprioClassNone {
		return class, level, err
	}
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("qos: sched_getattr(%d): %w", tid, err)
	}
	level = (int(attr.Nice) + 20) / 5
	switch attr.Policy {
	case unix.SCHED_IDLE:
		return ioprioClassIdle, 0, nil
	case unix.SCHED_FIFO, unix.SCHED_RR, unix.SCHED_DEADLINE:
		return ioprioClassRT, level, nil
	}
	return ioprioClassBE, level, nil
}

// ioRank orders I/O priorities from highest (0) to lowest.
func ioRank(class, level int) int {
	switch class {
	case ioprioClassRT:
		return level
	case ioprioClassIdle:
		return 100
	}
	return 10 + level
}

// lowerIOPrio sets thread tid's I/O priority to class and level unless it is
// already served as low. Unlike the nice value it could be raised back, but
// the thread method never needs to.
func lowerIOPrio(tid, class, level int) error {
	c, l, err := effectiveIOPrio(tid)
	if err != nil || ioRank(c, l) >= ioRank(class, level) {
		return err
	}
	v := uintptr(class<<ioprioClassShift | level)
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), v); errno != 0 {
		return fmt.Errorf("qos: ioprio_set(%d, %s %d): %w", tid, ioClassNames[class], level, errno)
	}
	return nil
}
