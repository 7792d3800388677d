package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lowerSpec is how a worker lowers itself first thing, for the exploratory
// arms that do not go through qos.Start (nice:N, idleclass). It travels in
// lowerEnv as "nice=N", "sched=idle" and "io=be7", comma-separated.
type lowerSpec struct {
	nice  int  // setpriority(2) value; 0 leaves nice alone
	idle  bool // SCHED_IDLE (sched(7))
	ioBE7 bool // I/O best-effort level 7 (ioprio_set(2))
}

func (s lowerSpec) String() string {
	var parts []string
	if s.nice != 0 {
		parts = append(parts, "nice="+strconv.Itoa(s.nice))
	}
	if s.idle {
		parts = append(parts, "sched=idle")
	}
	if s.ioBE7 {
		parts = append(parts, "io=be7")
	}
	return strings.Join(parts, ",")
}

func parseLowerSpec(v string) (lowerSpec, error) {
	var s lowerSpec
	for part := range strings.SplitSeq(v, ",") {
		switch {
		case part == "sched=idle":
			s.idle = true
		case part == "io=be7":
			s.ioBE7 = true
		case strings.HasPrefix(part, "nice="):
			n, err := strconv.Atoi(strings.TrimPrefix(part, "nice="))
			if err != nil {
				return s, fmt.Errorf("%s=%q: %w", lowerEnv, v, err)
			}
			s.nice = n
		default:
			return s, fmt.Errorf("%s=%q: unknown part %q", lowerEnv, v, part)
		}
	}
	return s, nil
}

// lowerSelf applies s to every thread of this process. nice, the scheduling
// policy and the I/O priority are per thread on Linux, and a new thread copies
// them from the thread that creates it (sched(7), ioprio_set(2): "a child
// created by fork(2) inherits its parent's I/O priority"); so once a pass over /proc/self/task finds no thread it has not
// lowered, every later thread is born lowered.
func lowerSelf(s lowerSpec) error {
	done := map[int]bool{}
	for {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := 0
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := lowerThread(tid, s); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("lower thread %d to %s: %w", tid, s, err)
			}
			done[tid] = true
			fresh++
		}
		if fresh == 0 {
			return nil
		}
	}
}

func lowerThread(tid int, s lowerSpec) error {
	if s.idle {
		// sched_setattr(2) also sets nice from the attr, so pass it along.
		attr := unix.SchedAttr{Policy: unix.SCHED_IDLE, Nice: int32(s.nice)}
		if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
			return err
		}
	}
	if s.nice != 0 {
		// On kernel 6.18 sched_setattr with SCHED_IDLE was seen to ignore Nice,
		// so nice is always set on its own as well.
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, s.nice); err != nil {
			return err
		}
	}
	if s.ioBE7 {
		return ioprioSet(tid, ioprioClassBE, 7)
	}
	return nil
}
