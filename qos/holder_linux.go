//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The holder is the keeper's child and the command's parent. It is a child
// subreaper (prctl(2) PR_SET_CHILD_SUBREAPER): whatever in the command's
// tree loses its parent (a double fork, a daemon, a background job whose
// shell exited) is reparented to it rather than to init or the session's
// subreaper (kernel/exit.c, find_new_reaper), so every process the command
// started stays below it, in whatever process group or session, until it
// exits. The holder kills that whole tree when the app is gone (EOF on the
// socket only the app's end of which is left: the app exited, crashed or
// was killed; descriptors close however a process ends) or when the keeper
// is (EOF on the keeper's pipe), and exits, as the command did, once
// nothing of the tree is left. It relays the signals the keeper relays to
// it to the command's process group.

type holder struct {
	agent  int // the command's pid
	reaped bool
	status syscall.WaitStatus
	cgroup string // the command's own cgroup, "" if none
}

// runHolder is the holder's main. sock is the socket shared with the app,
// kfd the read end of the keeper's pipe, cfd the write end of the pipe on
// which it names the command's cgroup to the keeper (which kills and removes
// it if the holder dies first); fds 3 to 3+Extra-1 are the command's
// ExtraFiles.
func runHolder(sock, kfd, cfd int) int {
	setName("qos-holder")
	unix.CloseOnExec(sock)
	unix.CloseOnExec(kfd)
	unix.CloseOnExec(cfd)
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, append([]os.Signal{unix.SIGCHLD}, forwarded...)...)
	var spec helperSpec
	if err := recvJSON(sock, &spec); err != nil {
		return 127 // the app is gone
	}
	h := &holder{}
	st := h.start(spec)
	if h.cgroup != "" {
		_, _ = unix.Write(cfd, []byte(h.cgroup+"\n"))
	}
	_ = unix.Close(cfd)
	if err := sendJSON(sock, st); err != nil || st.Err != "" {
		h.killAll()
		return 127
	}
	// The app's answer: it has checked who the holder is. Until then the
	// holder stays, whatever the command does, so that its pid is its own
	// when the app looks.
	var ack [1]byte
	if n, err := unix.Read(sock, ack[:]); n != 1 || err != nil {
		h.killAll()
		return h.exit()
	}
	devNull()
	for fd := 3; fd < 3+spec.Extra; fd++ {
		_ = unix.Close(fd)
	}
	app, keeper := eof(sock), eof(kfd)
	w := newSessionWatch(settingFor(spec.Tier, spec.Mode).nice, spec.AppAutogroup)
	look := time.NewTimer(sessionPoll)
	defer look.Stop()
	if w == nil {
		look.Stop() // nothing to watch: its channel never fires
	}
	for {
		select {
		case <-look.C:
			look.Reset(w.after(w.look(os.Getpid())))
		case s := <-sigs:
			if s != unix.SIGCHLD {
				h.forward(s.(syscall.Signal))
			} else if h.reap() {
				return h.exit()
			}
		case <-app:
			h.killAll()
			return h.exit()
		case <-keeper:
			h.killAll()
			return h.exit()
		}
	}
}

// start starts the command as the spec says, in a process group of its
// own, dying with the holder (Pdeathsig, from a kept thread), at the tier.
func (h *holder) start(spec helperSpec) helperStatus {
	refused := false
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return statusOf(os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err))
	}
	// Out of the keeper's group: a signal to that group is the keeper's to
	// relay, once.
	_ = unix.Setpgid(0, 0)
	cmd := &exec.Cmd{Path: spec.Path, Args: spec.Args, Env: spec.Env,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	for fd := 3; fd < 3+spec.Extra; fd++ {
		cmd.ExtraFiles = append(cmd.ExtraFiles, inherited(fd))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	x := startOpts{cgroup: spec.Cgroup, fg: -1}
	if spec.Foreground {
		x.fg = spec.Ctty
	}
	if spec.Cgroup != "" {
		x.sub = "agent-" + strconv.Itoa(os.Getpid())
	}
	var steps []stepStatus
	if spec.Autogroup {
		// The session's autogroup, before anything runs in it but the
		// helpers; a rate limit that outlasts the wait is the app's to
		// retry (and the session watch's).
		var err error
		nice := settingFor(spec.Tier, spec.Mode).nice
		if refused, err = ownGroupNice(nice, spec.AppAutogroup); err != nil {
			steps = append(steps, stepOf(&stepError{step: fmt.Sprintf("autogroup nice %d", nice), err: err}, true))
		}
	}
	x.report = func(err error) { steps = append(steps, stepOf(err, false)) }
	err := startAt(cmd, settingFor(spec.Tier, spec.Mode), &x)
	h.cgroup = x.dir
	if err != nil {
		h.removeCgroup()
		return statusOf(err)
	}
	h.agent = cmd.Process.Pid
	_ = cmd.Process.Release() // reaped below, with whatever else comes to the holder
	return helperStatus{Holder: os.Getpid(), Agent: h.agent, Cgroup: h.cgroup, Steps: steps, Refused: refused}
}

// reap reaps every child that exited and reports whether the command has
// and nothing else is left.
func (h *holder) reap() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ECHILD) {
			return h.reaped
		}
		if err != nil || pid <= 0 {
			return false
		}
		if pid == h.agent {
			h.reaped, h.status = true, syscall.WaitStatus(ws)
		}
	}
}

// forward relays sig to the command's process group while the command is
// not reaped (its pid, the group's id, cannot be reused until then), and
// afterwards to each process of the tree.
func (h *holder) forward(sig syscall.Signal) {
	if !h.reaped && unix.Kill(-h.agent, sig) == nil {
		return
	}
	if procs, err := allProcs(); err == nil {
		signalTree(liveBelow(procs, os.Getpid()), procs, sig, nil)
	}
}

// killAll kills every process below the holder, through the command's
// cgroup first if it has one (cgroup.kill, Linux 5.14:
// Documentation/admin-guide/cgroup-v2.rst), and reaps them.
func (h *holder) killAll() {
	if h.cgroup != "" {
		_ = writeFile(filepath.Join(h.cgroup, "cgroup.kill"), "1")
	}
	_, _, _ = killTree(os.Getpid(), func() { h.reap() }, nil)
	for i := 0; i < 100 && h.agent != 0 && !h.reap(); i++ {
		pause(10) // the last zombies: a second at most
	}
}

// exit removes the command's cgroup and ends the holder as the command
// ended.
func (h *holder) exit() int {
	h.removeCgroup()
	return exitStatus(h.status)
}

func (h *holder) removeCgroup() {
	if h.cgroup != "" {
		_ = os.Remove(h.cgroup)
	}
}

// eof returns a channel closed once fd reads EOF or fails.
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
