package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the calling thread. The caller must have
// locked its goroutine to the thread (clock_gettime(2): CLOCK_THREAD_CPUTIME_ID
// is per thread).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic("bench: CLOCK_THREAD_CPUTIME_ID: " + err.Error()) // present since Linux 2.6.12
	}
	return time.Duration(ts.Nano())
}

// sink keeps spin's arithmetic from being optimised away; atomic because
// several probe threads spin at once.
var sink atomic.Uint64

// spin does n rounds of integer work and returns the result.
func spin(x uint64, n int) uint64 {
	for range n {
		x ^= x << 13 // xorshift64 (Marsaglia 2003)
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// cpuWork burns d of the calling thread's CPU time (not wall time: under
// load the wall time grows, which is what the probes measure). The goroutine
// must be locked to its thread.
func cpuWork(d time.Duration) {
	end := threadCPU() + d
	x := uint64(88172645463325252)
	for threadCPU() < end {
		x = spin(x, 2000) // about 2 µs between clock reads
	}
	sink.Add(x)
}

// loadavg returns the first three fields of /proc/loadavg (proc(5)).
func loadavg() (string, float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "", 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "", 0, fmt.Errorf("/proc/loadavg: unexpected %q", b)
	}
	one, err := strconv.ParseFloat(f[0], 64)
	return strings.Join(f[:3], " "), one, err
}

// cpuTimes returns busy and total jiffies of all CPUs from /proc/stat (proc(5)).
func cpuTimes() (busy, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPULine(line)
}

// parseCPULine sums the first line of /proc/stat: user, nice, system, idle,
// iowait, irq, softirq, steal. The guest and guest_nice fields that follow
// are already counted in user and nice (proc(5)), so they are left out.
func parseCPULine(line string) (busy, total uint64, err error) {
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += v
		if i != 3 && i != 4 { // idle and iowait
			busy += v
		}
	}
	return busy, total, nil
}

// I/O priority, from include/uapi/linux/ioprio.h; x/sys/unix has no wrapper.
const (
	ioprioWhoProcess = 1  // IOPRIO_WHO_PROCESS: "process" means one thread
	ioprioClassShift = 13 // IOPRIO_CLASS_SHIFT
	ioprioClassBE    = 2  // IOPRIO_CLASS_BE
)

func ioprioSet(tid, class, level int) error {
	_, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid),
		uintptr(class<<ioprioClassShift|level))
	if e != 0 {
		return e
	}
	return nil
}

// killWorker sends SIGKILL to the process group the worker leads and to the
// worker itself: a setsid-arm worker leads no group until its own setsid(2)
// call, so a kill in that instant must reach it by pid.
func killWorker(pid int) error {
	var errs []error
	for _, target := range []int{-pid, pid} {
		if err := unix.Kill(target, unix.SIGKILL); err != nil && err != unix.ESRCH {
			errs = append(errs, fmt.Errorf("kill %d: %w", target, err))
		}
	}
	return errors.Join(errs...)
}
