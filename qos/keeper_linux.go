//go:build linux

package qos

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The keeper is what a held command's exec.Cmd runs: cmd.Process, forked
// by the app with the command's SysProcAttr (its session, process group and
// terminal), so that a signal to cmd.Process or to its process group
// reaches the command (relayed through the holder, once), and cmd.Wait
// returns when the command exits, with its exit status or signal (the
// holder tells the keeper, which ends the same way). It starts the holder
// and is a child subreaper, so that while the command runs a SIGKILL to the
// holder (by a user, by the OOM killer) does not free the tree: the
// holder's children are reparented to the keeper (kernel/exit.c,
// find_new_reaper: the nearest living subreaper ancestor), which kills
// them all, and the command's cgroup if it has one, and ends as the holder
// did. Killing the keeper while the command runs (exec.CommandContext's
// cancel, cmd.Process.Kill) ends the tree: the holder reads EOF on a socket
// only the keeper held.

// forwarded are the signals the keeper and the holder relay: every one a
// program may catch, but SIGCHLD (the helpers' own children), SIGURG (the
// Go runtime's preemption, runtime/signal_unix.go), SIGPIPE and the
// synchronous ones, which are about the helper itself. SIGKILL and SIGSTOP
// cannot be caught: SIGKILL to the keeper ends the tree; SIGSTOP stops the
// keeper alone (stop the command itself, Applied.Pid, or send SIGTSTP,
// which is relayed).
var forwarded = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2,
	unix.SIGALRM, unix.SIGVTALRM, unix.SIGPROF, unix.SIGWINCH, unix.SIGCONT,
	unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGPWR, unix.SIGXCPU, unix.SIGXFSZ,
}

// runKeeper is the keeper's main. sock is the app's socket, which the
// holder answers on; fds 3 to sock-1 are the command's ExtraFiles, open as
// extraOpen says (see helperEnvVar).
func runKeeper(sock int, extraOpen string) int {
	extra := extraFds(extraOpen)
	setName("qos-keeper")
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, append([]os.Signal{unix.SIGCHLD}, forwarded...)...)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return keeperFailed(sock, os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err))
	}
	holder, lines, err := startHolder(sock, extraOpen)
	if err != nil {
		return keeperFailed(sock, err)
	}
	devNull()
	for fd := range extra {
		_ = unix.Close(fd) // the command's: the holder's now
	}
	_ = unix.Close(sock)
	k := &keeperState{}
	for {
		select {
		case s := <-sigs:
			if s != unix.SIGCHLD {
				_ = unix.Kill(holder, s.(syscall.Signal))
				continue
			}
			var ws unix.WaitStatus
			if pid, _ := unix.Wait4(holder, &ws, unix.WNOHANG, nil); pid == holder {
				return k.holderExited(lines, syscall.WaitStatus(ws))
			}
		case l, ok := <-lines:
			if !ok {
				lines = nil
			} else if k.note(l) {
				return exitStatus(k.status) // the command's end; the holder keeps the rest
			}
		}
	}
}

// keeperState is what the holder told the keeper.
type keeperState struct {
	cgroup string             // the command's own, once the holder names it
	exited bool               // the command has ended, as status says
	status syscall.WaitStatus // how
}

// note takes a line from the holder and reports whether it tells the
// command's end.
func (k *keeperState) note(l string) bool {
	if dir, ok := strings.CutPrefix(l, "cgroup "); ok {
		k.cgroup = dir
	}
	if st, ok := strings.CutPrefix(l, "exit "); ok {
		ws, _ := strconv.ParseUint(st, 10, 32)
		k.exited, k.status = true, syscall.WaitStatus(ws)
	}
	return k.exited
}

// holderExited ends the keeper once the holder has: it reads what the
// holder said last (its socket is at EOF now; lines is nil once read to
// the end), kills what the holder left to it, if it died before its tree
// did, and ends as the command did, or else as the holder did.
func (k *keeperState) holderExited(lines <-chan string, ws syscall.WaitStatus) int {
	if lines != nil {
		for l := range lines {
			k.note(l)
		}
	}
	orphans(k.cgroup)
	if k.exited {
		return exitStatus(k.status)
	}
	return exitStatus(ws)
}

// startHolder starts the holder with the command's descriptors (0 to
// sock-1, of 3 and up those extraOpen names), the app's socket as sock,
// and as sock+1 the keeper's socket, on which the holder names the
// command's cgroup and tells the command's end. It forks with
// syscall.ForkExec rather than os/exec, whose first start in a process
// costs one more fork (os, checkPidfd).
func startHolder(sock int, extraOpen string) (pid int, lines <-chan string, err error) {
	extra := extraFds(extraOpen)
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, os.NewSyscallError("socketpair", err)
	}
	files := []uintptr{0, 1, 2}
	for fd := 3; fd < sock; fd++ {
		if !extra[fd] {
			files = append(files, ^uintptr(0)) // an ExtraFiles entry the app left nil: closed in the child
			continue
		}
		files = append(files, uintptr(fd))
	}
	files = append(files, uintptr(sock), uintptr(pair[1]))
	env := helperEnviron(fmt.Sprintf("holder:%d:%d:%s", sock, sock+1, extraOpen))
	pid, err = syscall.ForkExec(selfExe, []string{"qos-holder"}, &syscall.ProcAttr{Env: env, Files: files})
	_ = unix.Close(pair[1])
	if err != nil {
		_ = unix.Close(pair[0])
		return 0, nil, err
	}
	return pid, readLines(pair[0]), nil
}

// readLines returns the lines read from fd, closed at EOF. Its goroutine
// ends then, or with the keeper.
func readLines(fd int) <-chan string {
	c := make(chan string, 4)
	go func() {
		defer close(c)
		f := os.NewFile(uintptr(fd), "qos keeper socket")
		for s := bufio.NewScanner(f); s.Scan(); {
			c <- s.Text()
		}
	}()
	return c
}

// orphans kills what the holder left to the keeper, having died before
// its tree did, and reaps it; dir is the command's cgroup, "" if none,
// which it kills first (cgroup.kill) and removes.
func orphans(dir string) {
	if dir != "" {
		_ = writeFile(filepath.Join(dir, "cgroup.kill"), "1")
	}
	_, _, _ = killTree(os.Getpid(), func() { reapAll(func(int, unix.WaitStatus) {}) }, nil)
	for i := 0; i < 100 && !reapAll(func(int, unix.WaitStatus) {}); i++ {
		pause(10) // the last zombies: a second at most
	}
	if dir != "" {
		_ = os.Remove(dir)
	}
}

// keeperFailed tells the app, on the socket the holder would have
// answered on, that the holder could not start (and why, without the
// helper's path, which names no command of the app's).
func keeperFailed(sock int, err error) int {
	st := statusOf(err)
	st.Op, st.Path = "", ""
	st.Err = "qos's holder did not start"
	if st.Errno != 0 {
		st.Err += ": " + syscall.Errno(st.Errno).Error()
	}
	_ = sendJSON(sock, st)
	return 127
}

// exitStatus ends this process as ws says a child ended: it returns the
// same exit status, or dies of the same signal, whose default action is
// restored at the kernel, past the Go runtime's handler, after a core dump
// is ruled out (the child dumped its own, if any). The signal goes to this
// very thread, unblocked, so the kernel delivers it as tgkill(2) returns:
// unlocked, the goroutine could move to another thread between Gettid and
// Tgkill, and the SIGKILL after it could land first.
func exitStatus(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	runtime.LockOSThread() // never unlocked: the process ends here
	sig := ws.Signal()
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	signal.Reset(sig)
	defaultAction(sig)
	var set unix.Sigset_t
	sigaddset(&set, sig)
	_ = unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	_ = unix.Kill(unix.Getpid(), unix.SIGKILL) // a signal whose default is not to end the process
	return 128 + int(sig)
}

// defaultAction sets sig's disposition to SIG_DFL with rt_sigaction(2)
// itself, past the Go runtime (which would otherwise handle a SIGSEGV sent
// by kill as its own crash). The action is all zeros: handler SIG_DFL, no
// flags, an empty mask, whatever the architecture's struct layout. The
// kernel's sigset is 8 bytes but on MIPS (128 signals), where it is 16.
func defaultAction(sig syscall.Signal) {
	var act [8]uint64
	for _, size := range []uintptr{8, 16} {
		_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, size, 0, 0)
		if errno != unix.EINVAL {
			return
		}
	}
}
