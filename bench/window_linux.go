package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Thresholds above which a window is flagged as disturbed from outside: CPU
// stolen by the hypervisor, and CPU used by processes that are neither the
// bench nor its workers, each as a share of all CPUs' time.
const (
	stealFlag = 0.05
	otherFlag = 0.15
)

// snapshot is what the bench reads at both ends of a probe window.
type snapshot struct {
	at       time.Duration // CLOCK_MONOTONIC
	cpu      cpuFields     // /proc/stat, all CPUs
	own      uint64        // CPU ticks of the bench and its live workers
	app      uint64        // CPU ticks of the bench process alone: the app
	psi      [2]float64    // seconds some task stalled on CPU, on I/O (PSI totals)
	psiOK    bool
	progress map[string][2]uint64 // worker mode -> operations, bytes
}

// cpuFields are the first eight fields of /proc/stat's cpu line (proc(5)):
// user, nice, system, idle, iowait, irq, softirq, steal, in USER_HZ ticks.
type cpuFields [8]uint64

const (
	cpuUser, cpuNice, cpuSystem, cpuIdle, cpuIOWait, cpuIRQ, cpuSoftIRQ, cpuSteal = 0, 1, 2, 3, 4, 5, 6, 7
)

// parseCPUFields parses the first line of /proc/stat. Kernels before 2.6.11
// print fewer fields; the missing ones stay zero.
func parseCPUFields(line string) (cpuFields, error) {
	var c cpuFields
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return c, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return c, fmt.Errorf("/proc/stat: %w", err)
		}
		c[i] = v
	}
	return c, nil
}

func (c cpuFields) total() (t uint64) {
	for _, v := range c {
		t += v
	}
	return t
}

// parseProcCPU returns utime + stime (fields 14 and 15, in USER_HZ ticks)
// of a /proc/<pid>/stat line, counting fields after the command name,
// which may hold spaces and parentheses (proc_pid_stat(5)).
func parseProcCPU(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	f := strings.Fields(stat[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("unexpected stat %q", stat)
	}
	u, err1 := strconv.ParseUint(f[14-3], 10, 64)
	s, err2 := strconv.ParseUint(f[15-3], 10, 64)
	return u + s, errors.Join(err1, err2)
}

// parsePSITotal returns the "some" line's total of a /proc/pressure file,
// in seconds (Documentation/accounting/psi.rst: total is in microseconds).
func parsePSITotal(s string) (float64, error) {
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(line, "some ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 64)
				return float64(us) / 1e6, err
			}
		}
	}
	return 0, fmt.Errorf("no \"some ... total=\" in %q", s)
}

// parseSchedstat returns the run-queue delay of a
// /proc/<pid>/task/<tid>/schedstat line: time on the CPU, time waiting on a
// run queue, and timeslices, in ns (Documentation/scheduler/sched-stats.rst).
func parseSchedstat(s string) (time.Duration, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return 0, fmt.Errorf("schedstat: unexpected %q", s)
	}
	v, err := strconv.ParseUint(f[1], 10, 64)
	return time.Duration(v), err
}

// threadRunDelay reads the calling thread's run-queue delay; the goroutine
// must be locked to its thread.
func threadRunDelay() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", unix.Gettid()))
	if err != nil {
		return 0, err
	}
	return parseSchedstat(string(b))
}

// readPSI reads the CPU and I/O pressure totals; PSI needs CONFIG_PSI and
// may be switched off (psi=0) or hidden in a container.
func readPSI() ([2]float64, error) {
	var out [2]float64
	for i, name := range []string{"cpu", "io"} {
		b, err := os.ReadFile("/proc/pressure/" + name)
		if err != nil {
			return out, err
		}
		if out[i], err = parsePSITotal(string(b)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// procCPU returns the CPU ticks process pid has used.
func procCPU(pid string) (uint64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcCPU(string(b))
}

// windowSeries turns the snapshots at both ends of a window into the
// round's series: the agents' progress per kind and the window's length,
// and the machine's steal, the app's CPU, CPU used outside the bench,
// pressure and flag.
func windowSeries(s0, s1 snapshot) map[string][]float64 {
	secs := (s1.at - s0.at).Seconds()
	out := map[string][]float64{}
	if len(s1.progress) > 0 {
		out["agent.secs"] = []float64{secs}
		for mode, key := range map[string]string{"spin": "agent.spin", "meta": "agent.meta"} {
			out[key] = []float64{float64(s1.progress[mode][0] - s0.progress[mode][0])}
		}
		for mode, key := range map[string]string{"write": "agent.write", "read": "agent.read"} {
			out[key] = []float64{float64(s1.progress[mode][1] - s0.progress[mode][1])}
		}
	}
	d := func(i int) float64 { return float64(s1.cpu[i] - s0.cpu[i]) }
	total := float64(s1.cpu.total() - s0.cpu.total())
	other := max(0, d(cpuUser)+d(cpuNice)+d(cpuSystem)-float64(s1.own-s0.own))
	flagged := 0.0
	if total > 0 && (d(cpuSteal)/total > stealFlag || other/total > otherFlag) {
		flagged = 1
	}
	out["machine.total"], out["machine.steal"], out["machine.other"] = []float64{total}, []float64{d(cpuSteal)}, []float64{other}
	out["machine.flagged"], out["machine.secs"] = []float64{flagged}, []float64{secs}
	out["machine.app"] = []float64{float64(s1.app - s0.app)}
	if s0.psiOK && s1.psiOK {
		out["machine.psi_cpu"], out["machine.psi_io"] = []float64{s1.psi[0] - s0.psi[0]}, []float64{s1.psi[1] - s0.psi[1]}
	}
	return out
}
