//go:build linux

package qos

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

// Autogroup (sched(7), "The autogroup feature"): with
// /proc/sys/kernel/sched_autogroup_enabled at 1, setsid(2) puts the caller in
// a new autogroup, and the CPU is shared between autogroups first, so a
// child's own nice value no longer weighs against the GUI. The group's own
// weight comes from the nice value written to /proc/<pid>/autogroup.
const autogroupSysctl = "/proc/sys/kernel/sched_autogroup_enabled"

// Writes to /proc/<pid>/autogroup without CAP_SYS_ADMIN are limited to one
// per HZ/10 system-wide and fail with EAGAIN before that
// (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice), so a write is
// retried for a bounded time, longer than the 100 ms window.
const (
	autogroupTries = 50
	autogroupPause = 20 * time.Millisecond
)

// autogroupRetries counts writes the rate limit refused; tests read it.
var autogroupRetries atomic.Int64

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

// setAutogroupNice gives the autogroup of process pid, a child in a new
// session, the nice value nice. It does nothing when autogroup is off, and
// never writes to the application's own autogroup: a child that shares it is
// not in a new session, and its own nice value already competes.
func setAutogroupNice(pid, nice int) error {
	if b, err := os.ReadFile(autogroupSysctl); err != nil || strings.TrimSpace(string(b)) != "1" {
		return nil // no autogroup support or switched off: nothing to undo
	}
	own, _, err := autogroup(os.Getpid())
	if err != nil {
		return err
	}
	child, _, err := autogroup(pid)
	if errors.Is(err, os.ErrNotExist) {
		return nil // the child already exited
	}
	if err != nil || child == own {
		return err
	}
	return writeAutogroup(pid, nice)
}

// writeAutogroup writes nice to /proc/<pid>/autogroup, retrying while the
// kernel's rate limit answers EAGAIN.
func writeAutogroup(pid, nice int) error {
	path := "/proc/" + strconv.Itoa(pid) + "/autogroup"
	var err error
	for range autogroupTries {
		err = writeFile(path, strconv.Itoa(nice))
		if !errors.Is(err, unix.EAGAIN) {
			break
		}
		autogroupRetries.Add(1)
		t := time.NewTimer(autogroupPause)
		<-t.C
	}
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return nil // the child already exited
	}
	if err != nil {
		return fmt.Errorf("qos: set autogroup nice %d: %w", nice, err)
	}
	return nil
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
