//go:build linux

package qos

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The keeper is the process a Group's command is to the app: cmd.Process,
// forked with the command's SysProcAttr (its session, process group and
// terminal), so that cmd.Wait, cmd.Process.Signal, Kill and a signal to
// its process group all do what they would do to the command. It starts
// the holder, relays every signal it gets to it, and exits as the holder
// does, which exits as the command does. Killing it (exec.CommandContext's
// cancel, WaitDelay, Kill) ends the tree: the holder reads EOF on a pipe
// only the keeper held and kills what it holds.
//
// The keeper is a child subreaper too, so that the holder's own death does
// not free the tree: if the holder is SIGKILLed (by a user, by the OOM
// killer), its children, the command and what the command's tree
// reparented to it, are reparented to the keeper (kernel/exit.c,
// find_new_reaper: the nearest living subreaper ancestor), which kills
// them all, and the command's cgroup if it has one, before it exits.

// forwarded are the signals the keeper and the holder relay: every one a
// program may catch, but SIGCHLD (the helpers' own children), SIGURG (the
// Go runtime's preemption, runtime/signal_unix.go), SIGPIPE and the
// synchronous ones, which are about the helper itself. SIGKILL and SIGSTOP
// cannot be caught: SIGKILL to the keeper ends the tree; SIGSTOP stops the
// keeper alone (stop an agent with SIGTSTP, which is relayed).
var forwarded = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2,
	unix.SIGALRM, unix.SIGVTALRM, unix.SIGPROF, unix.SIGWINCH, unix.SIGCONT,
	unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGPWR, unix.SIGXCPU, unix.SIGXFSZ,
}

// runKeeper is the keeper's main. sock is the socket the app shares with
// the holder; fds 3 to sock-1 are the command's ExtraFiles.
func runKeeper(sock int) int {
	setName("qos-keeper")
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return keeperFailed(sock, os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err))
	}
	r, w, err := os.Pipe() // the holder's view of this process: EOF once it is gone
	if err != nil {
		return keeperFailed(sock, err)
	}
	cr, cw, err := os.Pipe() // the holder names the command's cgroup on it
	if err != nil {
		return keeperFailed(sock, err)
	}
	h := exec.Command(selfExe)
	h.Args = []string{"qos-holder"}
	h.Env = append(os.Environ(), fmt.Sprintf("%s=holder:%d:%d:%d", helperEnvVar, sock, sock+1, sock+2))
	h.Stdin, h.Stdout, h.Stderr = os.Stdin, os.Stdout, os.Stderr
	for fd := 3; fd <= sock; fd++ {
		h.ExtraFiles = append(h.ExtraFiles, inherited(fd))
	}
	h.ExtraFiles = append(h.ExtraFiles, r, cw)
	if err := h.Start(); err != nil {
		return keeperFailed(sock, err)
	}
	for _, f := range h.ExtraFiles {
		if f != nil {
			_ = f.Close()
		}
	}
	devNull()
	cgroup := make(chan string, 1)
	go func() { b, _ := io.ReadAll(cr); _ = cr.Close(); cgroup <- strings.TrimSpace(string(b)) }()
	done := make(chan error, 1)
	go func() { done <- h.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = h.Process.Signal(s)
		case <-done:
			_ = w.Close()
			// The holder's pipe end closed with it, so the name is in.
			orphans(<-cgroup)
			ws, _ := h.ProcessState.Sys().(syscall.WaitStatus)
			return exitStatus(ws)
		}
	}
}

// orphans kills what the holder left to the keeper, having died before
// its tree did (nothing, when it exited as it should: once its tree was
// gone), and reaps it; dir is the command's cgroup, "" if none, which it
// kills first (cgroup.kill) and removes.
func orphans(dir string) {
	if dir != "" {
		_ = writeFile(filepath.Join(dir, "cgroup.kill"), "1")
	}
	_, _, _ = killTree(os.Getpid(), func() { reapAny() }, nil)
	for i := 0; i < 100 && !reapAny(); i++ {
		pause(10) // the last zombies: a second at most
	}
	if dir != "" {
		_ = os.Remove(dir)
	}
}

// reapAny reaps every child that exited and reports whether none is left.
func reapAny() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ECHILD):
			return true
		case err != nil || pid <= 0:
			return false
		}
	}
}

// inherited returns fd as a file, or nil if it is not open (an ExtraFiles
// entry the app left nil is closed in the child).
func inherited(fd int) *os.File {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "fd "+fmt.Sprint(fd))
}

// keeperFailed tells the app, through the holder's socket, that the holder
// could not start.
func keeperFailed(sock int, err error) int {
	_ = sendJSON(sock, statusOf(fmt.Errorf("qos: start the holder: %w", err)))
	return 127
}

// exitStatus ends this process as ws says a child ended: it returns the
// same exit status, or dies of the same signal, whose default action is
// restored at the kernel, past the Go runtime's handler, after a core dump
// is ruled out (the child dumped its own, if any).
func exitStatus(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
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
