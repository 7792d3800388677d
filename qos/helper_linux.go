//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// helperEnvVar carries a helper's role, descriptor numbers and which of the
// command's ExtraFiles are open from the app to the keeper ("keeper:<app
// socket>:<extra>") and from the keeper to the holder ("holder:<app
// socket>:<keeper socket>:<extra>"), extra being one character for each of
// fds 3 to the app socket's: '1' open, '0' an entry the app left nil. A
// helper cannot tell those from what it sees: the Go runtime opens
// descriptors of its own before main (the cgroup files it reads for
// GOMAXPROCS), in the lowest free slots. The command's own environment
// travels in the spec, so this never reaches it.
const helperEnvVar = "OFFMAIN_QOS_HELPER"

// selfExe is the running binary whatever its path became since (moved,
// replaced by an update): proc(5), /proc/self/exe.
const selfExe = "/proc/self/exe"

// hooked is set by Main in a process that is not a helper: a copy of this
// binary run again would call Main too, so it can be a helper.
var hooked atomic.Bool

func runHelper() {
	v, ok := os.LookupEnv(helperEnvVar)
	if !ok {
		hooked.Store(true)
		return
	}
	os.Exit(helperMain(v))
}

// helperMain runs the helper v names and returns its exit status.
func helperMain(v string) int {
	f := strings.Split(v, ":")
	fd := func(i int) int {
		n, err := strconv.Atoi(f[i])
		if err != nil {
			return -1
		}
		return n
	}
	switch {
	case f[0] == "keeper" && len(f) == 3 && fd(1) >= 3 && len(f[2]) == fd(1)-3:
		return runKeeper(fd(1), f[2])
	case f[0] == "holder" && len(f) == 4 && fd(1) >= 3 && fd(2) >= 0 && len(f[3]) == fd(1)-3:
		return runHolder(fd(1), fd(2), f[3])
	}
	fmt.Fprintf(os.Stderr, "qos: %s=%q names no helper\n", helperEnvVar, v)
	return 2
}

// helperEnviron is this process's environment with helperEnvVar set to v, and
// set once: syscall.ForkExec passes duplicates on, and the first one wins
// (syscall.Getenv).
func helperEnviron(v string) []string {
	env := []string{helperEnvVar + "=" + v}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnvVar+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// eof returns a channel closed once fd reads EOF or fails. Its goroutine
// ends then, or with the helper process.
func eof(fd int) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		var b [64]byte
		for {
			n, err := unix.Read(fd, b[:])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || n == 0 {
				return
			}
		}
	}()
	return c
}

// setName names the process for ps and top: writing /proc/self/comm sets
// the thread group leader's name (proc(5), /proc/pid/comm). Without it a
// helper is "exe", from /proc/self/exe.
func setName(name string) { _ = writeFile("/proc/self/comm", name) }

// devNull puts /dev/null on fds 0, 1 and 2, so that a helper holds none of
// the command's pipes or terminal: the ends the app reads get their EOF
// when the command's own copies close.
func devNull() {
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	for fd := range 3 {
		_ = unix.Dup3(int(f.Fd()), fd, 0)
	}
}

// extraFiles words which of files, a command's ExtraFiles, are open, for
// helperEnvVar.
func extraFiles(files []*os.File) string {
	b := make([]byte, len(files))
	for i, f := range files {
		b[i] = '0'
		if f != nil {
			b[i] = '1'
		}
	}
	return string(b)
}

// extraFds returns the descriptors that hold the command's ExtraFiles, as
// helperEnvVar's extra says.
func extraFds(extra string) map[int]bool {
	open := map[int]bool{}
	for i, c := range extra {
		if c == '1' {
			open[3+i] = true
		}
	}
	return open
}

// reapAll reaps every child that exited, calling each with its pid and
// status, and reports whether none is left.
func reapAll(each func(pid int, ws unix.WaitStatus)) bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ECHILD):
			return true
		case err != nil || pid <= 0:
			return false
		default:
			each(pid, ws)
		}
	}
}
