package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuUse is what a process's threads got from the scheduler: CPU time and
// time runnable but waiting for a CPU, summed over threads, in ns, from
// /proc/PID/task/TID/schedstat (Documentation/scheduler/sched-stats.rst:
// "time spent on the cpu", "time spent waiting on a runqueue").
type cpuUse struct {
	cpu, wait int64
	byTID     map[string][2]int64
}

// threadsUse reads the schedstat of every thread of pid. A thread that
// cannot be read (it ended) is left out.
func threadsUse(pid int) cpuUse {
	u := cpuUse{byTID: map[string][2]int64{}}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		if v, ok := parseSchedstat(string(b)); ok {
			u.byTID[e.Name()] = v
			u.cpu += v[0]
			u.wait += v[1]
		}
	}
	return u
}

// parseSchedstat parses "cpu_ns wait_ns timeslices".
func parseSchedstat(s string) ([2]int64, bool) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return [2]int64{}, false
	}
	c, err1 := strconv.ParseInt(f[0], 10, 64)
	w, err2 := strconv.ParseInt(f[1], 10, 64)
	return [2]int64{c, w}, err1 == nil && err2 == nil
}

// minus is what u's threads got since before: a thread born in between
// counts whole; one that ended in between is lost (the app's and Xvfb's
// threads live as long as the window here).
func (u cpuUse) minus(before cpuUse) cpuUse {
	d := cpuUse{}
	for tid, v := range u.byTID {
		b := before.byTID[tid]
		d.cpu += v[0] - b[0]
		d.wait += v[1] - b[1]
	}
	return d
}

// calibUse is how long typebench's own fixed work took during an arm's
// warm-up, median ns: a memory copy larger than the last-level cache and a
// register-only loop. Both run at the app's priority (nice 0) on a thread
// of their own, so against the idle arm's they show what the agents cost
// work that wins every CPU it asks for: the share of the machine no
// scheduler setting in the guest hands out (shared caches and memory
// bandwidth; on a VM, the host's cores).
type calibUse struct {
	copyNS, loopNS int64
}

const (
	calibCopyBytes = 64 << 20 // larger than an EPYC CCX's 32 MiB L3
	calibLoopIters = 20_000_000
	calibGap       = 20 * time.Millisecond // between runs, so the thread sleeps and wakes as a UI thread does
)

// calibrate waits half of d, then for the other half repeats the copy and
// the loop, and returns their medians.
func calibrate(d time.Duration) calibUse {
	time.Sleep(d / 2) // a benchmark's pause: the agents get going
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	src, dst := make([]byte, calibCopyBytes), make([]byte, calibCopyBytes)
	for i := range src {
		src[i] = byte(i)
	}
	var copies, loops []int64
	end := time.Now().Add(d / 2)
	for time.Now().Before(end) || len(copies) < 3 {
		t := time.Now()
		copy(dst, src)
		copies = append(copies, int64(time.Since(t)))
		t = time.Now()
		if spin(calibLoopIters) == 0 {
			panic("typebench: xorshift reached 0")
		}
		loops = append(loops, int64(time.Since(t)))
		time.Sleep(calibGap)
	}
	return calibUse{copyNS: median(copies), loopNS: median(loops)}
}

// spin runs n rounds of Marsaglia's xorshift64 step (registers only, no
// memory) and returns the state, which is never 0 from a non-zero seed; the
// caller's check of that keeps the compiler from dropping the loop.
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// readTrim reads a small file and trims its white space.
func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}
