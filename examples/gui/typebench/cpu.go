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

// calibUse is what typebench's own probes met during an arm's warm-up, on
// a thread of its own at the app's priority (nice 0), beside whatever the
// arm runs: how late a 1 ms sleep woke (the time a woken thread waits for
// a CPU: what no work of its own explains), and how long a fixed memory
// copy larger than the last-level cache took (whether the agents slow
// work that does get a CPU: shared caches, memory bandwidth, a VM's host).
type calibUse struct {
	late   []int64 // each sleep's lateness, ns
	copyNS int64   // the copies' median, ns
}

const (
	calibCopyBytes = 64 << 20 // larger than an EPYC CCX's 32 MiB L3
	calibSleep     = time.Millisecond
	calibCopyEvery = 100 // sleeps between copies
)

// calibrate waits half of d, then for the other half sleeps calibSleep in
// a loop, with a copy every calibCopyEvery sleeps.
func calibrate(d time.Duration) calibUse {
	time.Sleep(d / 2) // a benchmark's pause: the agents get going
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	src, dst := make([]byte, calibCopyBytes), make([]byte, calibCopyBytes)
	for i := range src {
		src[i] = byte(i)
	}
	var c calibUse
	var copies []int64
	end := time.Now().Add(d / 2)
	for i := 0; time.Now().Before(end) || len(copies) < 3; i++ {
		if i%calibCopyEvery == 0 {
			t := time.Now()
			copy(dst, src)
			copies = append(copies, int64(time.Since(t)))
		}
		if late, ok := sleepLate(calibSleep); ok {
			c.late = append(c.late, int64(late))
		}
	}
	c.copyNS = median(copies)
	return c
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
