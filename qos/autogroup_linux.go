//go:build linux

package qos

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Autogroup (sched(7), "The autogroup feature"): with
// /proc/sys/kernel/sched_autogroup_enabled at 1, setsid(2) puts the caller in
// a new autogroup, and the CPU is shared between autogroups first, so a
// child's own nice value no longer weighs against the GUI. The group's own
// weight comes from the nice value written to /proc/<pid>/autogroup.
const autogroupSysctl = "/proc/sys/kernel/sched_autogroup_enabled"

// autogroup reads /proc/<pid>/autogroup.
func autogroup(pid int) (name string, nice int, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/autogroup")
	if err != nil {
		return "", 0, fmt.Errorf("qos: %w", err)
	}
	name, nice, err = parseAutogroup(string(b))
	if err != nil {
		return "", 0, fmt.Errorf("qos: /proc/%d/autogroup: %w", pid, err)
	}
	return name, nice, nil
}

// parseAutogroup parses "/autogroup-42 nice 5\n", or "" for the default
// autogroup.
func parseAutogroup(s string) (name string, nice int, err error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return RootAutogroup, 0, nil
	}
	if len(f) != 3 || f[1] != "nice" {
		return "", 0, fmt.Errorf("unexpected %q", s)
	}
	nice, err = strconv.Atoi(f[2])
	if err != nil {
		return "", 0, fmt.Errorf("unexpected %q", s)
	}
	return f[0], nice, nil
}

// autogroupOn reports whether the kernel puts a new session in a new
// autogroup.
func autogroupOn() bool {
	b, err := os.ReadFile(autogroupSysctl)
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// writeFile writes s to an existing file (proc and cgroup files), with no
// O_CREATE or O_TRUNC.
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rootTaskGroup reports whether process pid's CPU time is shared out by
// the root task group, the only place the kernel uses autogroups: a task in
// any cgroup with the cpu controller competes by that cgroup's weight, its
// autogroup unused (kernel/sched/autogroup.c, task_wants_autogroup). With
// cgroup v1 that is a cpu hierarchy path other than "/"; with cgroup v2, a
// cgroup whose cpu.weight file exists (the controller is enabled for it).
// When it cannot tell, it says true, and the autogroup is written anyway.
func rootTaskGroup(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return true
	}
	v2 := ""
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "cpu") {
			return f[2] == "/"
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
	}
	if v2 == "" || v2 == "/" {
		return true
	}
	for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(mnt, v2, "cpu.weight")); err == nil {
			return false
		}
	}
	return true
}
