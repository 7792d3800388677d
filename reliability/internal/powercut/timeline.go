//go:build linux

package powercut

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A timeline samples, once a second, what the kernel says of the test
// process and of the helper serving the mount: the CPU time their threads
// got and the time they waited runnable on a run queue (summed from
// /proc/pid/task/*/schedstat, proc(5)), how many threads were running
// (state R) and how many waited for the FUSE daemon's answer (wchan
// request_wait_answer, fs/fuse/dev.c), with the counted operations and the
// system's CPU pressure (/proc/pressure/cpu, "some", Documentation/
// accounting/psi.rst). A hang report prints the last minute of it, second
// by second: a cycle whose processes were not run (wait ≈ the second,
// CPU ≈ 0) reads differently from one whose writer waited for an answer,
// or for nothing.
//
// A stack dump shows one instant; this shows the minute before it.
type timeline struct {
	helper int // the helper's pid
	ops    func() uint64

	takeMu sync.Mutex // serialises take
	mu     sync.Mutex // protects ring and n
	ring   [timelineLen]sample
	n      int // samples taken

	stop chan struct{}
	done chan struct{}
}

// timelineLen is how many seconds a timeline keeps: the default
// HangGuard, and a margin.
const timelineLen = 75

type sample struct {
	at     time.Time
	ops    uint64
	self   procSample
	helper procSample
	psi    time.Duration // /proc/pressure/cpu "some" total
}

type procSample struct {
	cpu, wait time.Duration // summed over the threads alive at the sample
	threads   int
	running   int // in state R

	// waiting holds, for each thread in request_wait_answer, how many
	// times it has been scheduled (schedstat's third field): a thread
	// whose count does not move from one sample to the next has not run
	// between them, so it waited in one request all along.
	waiting map[string]uint64
}

// startTimeline starts sampling; stop ends it, and must be called.
func startTimeline(helper int, ops func() uint64) *timeline {
	tl := &timeline{helper: helper, ops: ops, stop: make(chan struct{}), done: make(chan struct{})}
	go tl.run()
	return tl
}

func (tl *timeline) run() {
	defer close(tl.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		tl.take()
		select {
		case <-tl.stop:
			return
		case <-tick.C:
		}
	}
}

func (tl *timeline) take() {
	// One sample at a time, so that the ring stays in time order when
	// the ticker and a report sample at once.
	tl.takeMu.Lock()
	defer tl.takeMu.Unlock()
	s := sample{at: time.Now(), ops: tl.ops(), self: readProc("self"),
		helper: readProc(strconv.Itoa(tl.helper)), psi: readPSI()}
	tl.mu.Lock()
	tl.ring[tl.n%timelineLen] = s
	tl.n++
	tl.mu.Unlock()
}

// end stops the sampling and waits for it.
func (tl *timeline) end() {
	close(tl.stop)
	<-tl.done
}

// report returns the samples since since, one line per second: the
// deltas from the sample before, then the counts of that sample.
func (tl *timeline) report(since time.Time) string {
	tl.take() // the state at the report itself
	tl.mu.Lock()
	var ss []sample
	for i := max(0, tl.n-timelineLen); i < tl.n; i++ {
		ss = append(ss, tl.ring[i%timelineLen])
	}
	tl.mu.Unlock()
	var b strings.Builder
	b.WriteString("timeline (per second: ops counted; test process and helper: cpu ms, run-queue wait ms, threads running/in request_wait_answer/all; cpu pressure some ms):\n")
	var sumSelf, sumHelper procSample
	var sumPSI time.Duration
	for i := 1; i < len(ss); i++ {
		p, s := ss[i-1], ss[i]
		if s.at.Before(since) {
			continue
		}
		ds, dh := s.self.minus(p.self), s.helper.minus(p.helper)
		sumSelf.cpu, sumSelf.wait = sumSelf.cpu+ds.cpu, sumSelf.wait+ds.wait
		sumHelper.cpu, sumHelper.wait = sumHelper.cpu+dh.cpu, sumHelper.wait+dh.wait
		sumPSI += s.psi - p.psi
		fmt.Fprintf(&b, "  %s +%5.2fs ops+%-4d test %4d/%-5d %d/%d/%d  helper %4d/%-5d %d/%d/%d  psi %d\n",
			s.at.Format("15:04:05.000"), s.at.Sub(p.at).Seconds(), s.ops-p.ops,
			ds.cpu.Milliseconds(), ds.wait.Milliseconds(), s.self.running, len(s.self.waiting), s.self.threads,
			dh.cpu.Milliseconds(), dh.wait.Milliseconds(), s.helper.running, len(s.helper.waiting), s.helper.threads,
			(s.psi - p.psi).Milliseconds())
	}
	fmt.Fprintf(&b, "  in all: test cpu %v wait %v; helper cpu %v wait %v; cpu pressure %v\n",
		sumSelf.cpu.Round(time.Millisecond), sumSelf.wait.Round(time.Millisecond),
		sumHelper.cpu.Round(time.Millisecond), sumHelper.wait.Round(time.Millisecond), sumPSI.Round(time.Millisecond))
	return b.String()
}

// minus returns the CPU and wait times of s since p. A thread that
// exited between them takes its times with it, so a negative delta is
// shown as zero.
func (s procSample) minus(p procSample) procSample {
	return procSample{cpu: max(0, s.cpu-p.cpu), wait: max(0, s.wait-p.wait)}
}

// readProc sums the schedstat of every thread of pid ("self" for this
// process) and counts the running ones and those waiting for a FUSE
// answer.
func readProc(pid string) procSample {
	var ps procSample
	dir := "/proc/" + pid + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return ps
	}
	for _, e := range tasks {
		data, err := os.ReadFile(dir + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var cpu, wait int64
		var slices uint64
		fmt.Sscan(string(data), &cpu, &wait, &slices)
		ps.cpu += time.Duration(cpu)
		ps.wait += time.Duration(wait)
		ps.threads++
		if st, err := os.ReadFile(dir + e.Name() + "/stat"); err == nil {
			if j := strings.LastIndexByte(string(st), ')'); j >= 0 && j+2 < len(st) && st[j+2] == 'R' {
				ps.running++
			}
		}
		if w, err := os.ReadFile(dir + e.Name() + "/wchan"); err == nil && string(w) == "request_wait_answer" {
			if ps.waiting == nil {
				ps.waiting = make(map[string]uint64)
			}
			ps.waiting[e.Name()] = slices
		}
	}
	return ps
}

// readPSI returns the "some" total of /proc/pressure/cpu, or 0 where the
// kernel has no PSI.
func readPSI() time.Duration {
	data, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	_, total, ok := strings.Cut(line, "total=")
	if !ok {
		return 0
	}
	us, _ := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	return time.Duration(us) * time.Microsecond
}

// stalled reports whether the samples taken since since show one thread
// of this process waiting in request_wait_answer, without being scheduled
// once, in every sample over a span of at least least, up to the last
// sample, while the helper counted no operation: that thread was blocked
// in one FUSE request the daemon did not answer. A thread that loops on
// requests the daemon answers (with errors, say) is scheduled between
// samples, and so does not count. It takes no sample of its own: it
// judges the ticker's samples before the report, not the instant of it.
func (tl *timeline) stalled(since time.Time, least time.Duration) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.n == 0 {
		return false
	}
	newest := tl.ring[(tl.n-1)%timelineLen]
	stuck := newest.self.waiting // the threads blocked all along so far
	for i := tl.n - 2; i >= max(0, tl.n-timelineLen); i-- {
		s := tl.ring[i%timelineLen]
		if s.at.Before(since) || s.ops != newest.ops {
			return false
		}
		kept := map[string]uint64{}
		for tid, slices := range stuck {
			if s.self.waiting[tid] == slices {
				kept[tid] = slices
			}
		}
		if stuck = kept; len(stuck) == 0 {
			return false
		}
		if newest.at.Sub(s.at) >= least {
			return true
		}
	}
	return false
}
