//go:build linux

package fusemount

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
)

// Stacks returns every goroutine's stack and, for each thread of this
// process, from proc(5): its state, nice value and scheduling policy
// (/proc/pid/task/tid/stat, fields 3, 19 and 41), its CPU time and
// run-queue wait in nanoseconds (schedstat), its kernel wait channel
// (wchan) and, unless it idles in the Go runtime's futex or epoll waits or
// in go-fuse's read of /dev/fuse, its kernel stack (stack, readable by root
// only). It starts with the scheduler's counts ([SchedStats]), read
// before runtime.Stack stops the world.
func Stacks() string {
	var b strings.Builder
	b.WriteString("scheduler: " + SchedStats() + "\nthread cpu/wait ms: " + ThreadTimes() + "\n\n")
	buf := make([]byte, 4<<20)
	b.Write(buf[:runtime.Stack(buf, true)])
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return b.String()
	}
	b.WriteString("\nthreads (tid: state nice policy; cpu ns, wait ns, slices; wchan):\n")
	for _, e := range tasks {
		dir := "/proc/self/task/" + e.Name()
		read := func(name string) string {
			data, _ := os.ReadFile(dir + "/" + name)
			return strings.TrimSpace(string(data))
		}
		state, nice, policy := "?", "?", "?"
		if st := read("stat"); st != "" {
			// The fields after the command's closing parenthesis, which
			// may itself hold spaces: field 3 is the first of them.
			if j := strings.LastIndexByte(st, ')'); j >= 0 {
				f := strings.Fields(st[j+1:])
				if len(f) > 38 {
					state, nice, policy = f[0], f[16], f[38]
				}
			}
		}
		w := read("wchan")
		fmt.Fprintf(&b, "%s: %s %s %s; %s; %s\n", e.Name(), state, nice, policy, read("schedstat"), w)
		if strings.HasPrefix(w, "futex") || strings.Contains(w, "epoll") || w == "fuse_dev_do_read" {
			continue
		}
		if st := read("stack"); st != "" {
			b.WriteString(st + "\n")
		}
	}
	return b.String()
}

// SchedStats returns what the Go runtime's metrics (runtime/metrics) say
// of this process's scheduler: GOMAXPROCS, threads, the goroutines running,
// runnable, waiting and in system calls, and the longest time a goroutine
// has waited runnable before it ran (/sched/latencies, a sampled
// histogram: the lower bound of its highest non-empty bucket). A goroutine
// left runnable while Ps idle shows as runnable=1 running=0, and once it
// runs, as a long wait.
func SchedStats() string {
	names := []string{
		"/sched/gomaxprocs:threads",
		"/sched/threads/total:threads",
		"/sched/goroutines/running:goroutines",
		"/sched/goroutines/runnable:goroutines",
		"/sched/goroutines/waiting:goroutines",
		"/sched/goroutines/not-in-go:goroutines",
		"/sched/latencies:seconds",
	}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	u := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return math.MaxUint64 // not in this Go release
		}
		return samples[i].Value.Uint64()
	}
	longest := "?"
	if v := samples[6].Value; v.Kind() == metrics.KindFloat64Histogram {
		h := v.Float64Histogram()
		for i := len(h.Counts) - 1; i >= 0; i-- {
			if h.Counts[i] > 0 {
				longest = "≥ " + time.Duration(h.Buckets[i]*float64(time.Second)).String()
				break
			}
		}
	}
	return fmt.Sprintf("gomaxprocs=%d threads=%d goroutines running=%d runnable=%d waiting=%d not-in-go=%d; longest runnable wait %s",
		u(0), u(1), u(2), u(3), u(4), u(5), longest)
}

// ThreadTimes returns, for each thread of this process, its CPU time and
// run-queue wait (schedstat, proc(5)), as "tid cpu/wait" in milliseconds:
// taken twice, they tell a thread the kernel did not run from one that ran
// and found nothing to do.
func ThreadTimes() string {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range tasks {
		data, _ := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
		var cpu, wait int64
		fmt.Sscan(string(data), &cpu, &wait)
		fmt.Fprintf(&b, "%s %d/%d ", e.Name(), cpu/1e6, wait/1e6)
	}
	return strings.TrimSpace(b.String())
}
