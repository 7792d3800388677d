package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/offmain/offmain/qos"
	"golang.org/x/sys/unix"
)

// busyThreshold is the share of all CPUs busy in the second before the run
// above which the table warns that the machine was not quiet. The figures
// themselves are still measured; the warning says they may be skewed.
const busyThreshold = 0.25

// machineEnv fills what does not depend on the scratch folder. It samples
// /proc/stat for one second, so it runs before the bench makes any file.
func machineEnv(ctx context.Context) (envInfo, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return envInfo{}, err
	}
	env := envInfo{
		Kernel:     unix.ByteSliceToString(u.Release[:]),
		Cores:      runtime.NumCPU(),
		Autogroup:  autogroup(),
		Cgroup:     cgroupLayout(),
		RlimitNice: rlimitNice(),
		Go:         runtime.Version(),
		Started:    time.Now(),
		Applied:    map[string]string{},
	}
	busy, err := busyFraction(ctx, time.Second)
	if err != nil {
		return env, err
	}
	la, one, err := loadavg()
	if err != nil {
		return env, err
	}
	env.BusyStart, env.LoadStart = busy, la
	if busy > busyThreshold || one >= float64(env.Cores) {
		env.Warning = fmt.Sprintf("the machine was busy before the run: %.0f%% of the CPUs busy in the second before it, load average %s (1, 5, 15 min) on %d cores. Figures may be skewed; run again on a quiet machine.",
			100*busy, la, env.Cores)
	}
	return env, nil
}

// busyFraction measures the share of all CPUs not idle over d (proc(5), /proc/stat).
func busyFraction(ctx context.Context, d time.Duration) (float64, error) {
	b0, t0, err := cpuTimes()
	if err != nil {
		return 0, err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-t.C:
	}
	b1, t1, err := cpuTimes()
	if err != nil || t1 == t0 {
		return 0, err
	}
	return float64(b1-b0) / float64(t1-t0), nil
}

// autogroup reports sched_autogroup_enabled (sched(7), "The autogroup
// feature") and the bench's own autogroup.
func autogroup() string {
	b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	if err != nil {
		return "not built in"
	}
	s := map[string]string{"0": "off", "1": "on"}[strings.TrimSpace(string(b))]
	switch a, err := qos.Inspect(os.Getpid()); {
	case err != nil:
		s += " (" + err.Error() + ")"
	case a.Autogroup == "/": // the kernel's default autogroup (Applied.Autogroup)
		s += " (bench in the default autogroup, /)"
	case a.Autogroup != "":
		s += fmt.Sprintf(" (bench in %s nice %d)", a.Autogroup, a.AutogroupNice)
	}
	return s
}

// cgroupLayout reports the cgroup version and where the bench's CPU
// controller sits (cgroups(7), /proc/<pid>/cgroup). Autogroup only acts when
// the CPU controller is at the root.
func cgroupLayout() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "unknown: " + err.Error()
	}
	v2 := "v1"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		v2 = "v2"
	}
	for line := range strings.Lines(string(b)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		for c := range strings.SplitSeq(f[1], ",") {
			if c == "cpu" {
				return fmt.Sprintf("%s, cpu controller at %s", v2, f[2])
			}
		}
		if v2 == "v2" && f[0] == "0" {
			return fmt.Sprintf("v2 unified, bench in %s", f[2])
		}
	}
	return v2 + ", no cpu controller"
}

// rlimitNice reports RLIMIT_NICE: the ceiling a process may raise nice back
// to is 20 - soft limit (getrlimit(2)); 0 means it cannot raise at all.
func rlimitNice() string {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NICE, &r); err != nil {
		return "unknown: " + err.Error()
	}
	return fmt.Sprintf("%d (hard %d)", r.Cur, r.Max)
}

// ioScheduler names the I/O scheduler of the disk under dir: the block
// device of dir's filesystem is /sys/dev/block/<major>:<minor>; a partition
// has no queue of its own, its parent disk does (sysfs-block(5)).
func ioScheduler(dir string) string {
	s, err := schedulerOf(dir)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return fmt.Sprintf("%s (%s)", s.active, s.disk())
}
