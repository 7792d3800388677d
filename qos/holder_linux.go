//go:build linux

package qos

import (
	"fmt"
	"io/fs"
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
// exits. When the command exits, the holder tells the keeper how, and holds
// what is left. It kills the whole tree when the app is gone (EOF on the
// socket only the app's end of which is left: the app exited, crashed or
// was killed; descriptors close however a process ends), first sending the
// command's own parent-death signal, if it has one, and giving the tree the
// Group's KillAfter to end; or when the keeper is killed while the command
// runs (EOF on the keeper's socket). It exits once nothing of the tree is
// left. It relays the signals the keeper relays to it to the command's
// process group.

type holder struct {
	spec   helperSpec
	extra  map[int]bool  // the command's ExtraFiles that are open (see helperEnvVar)
	keeper int           // the keeper's socket
	watch  *sessionWatch // the tree's sessions' autogroups; nil: none to watch
	agent  int           // the command's pid
	reaped bool          // the command was reaped, and the keeper told
	cgroup string        // the command's own cgroup, "" if none
}

// runHolder is the holder's main. sock is the app's socket, kfd the
// keeper's; fds 3 to 3+Extra-1 are the command's ExtraFiles.
func runHolder(sock, kfd int, extraOpen string) int {
	setName("qos-holder")
	unix.CloseOnExec(sock)
	unix.CloseOnExec(kfd)
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, append([]os.Signal{unix.SIGCHLD}, forwarded...)...)
	h := &holder{keeper: kfd, extra: extraFds(extraOpen)}
	if err := recvJSON(sock, &h.spec); err != nil {
		return 127 // the app is gone
	}
	st := h.start()
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
		return 0
	}
	devNull()
	for fd := range h.extra {
		_ = unix.Close(fd)
	}
	h.hold(sigs, eof(sock), eof(kfd))
	h.removeCgroup()
	return 0
}

// hold is the holder's loop, until nothing of the tree is left.
func (h *holder) hold(sigs <-chan os.Signal, app, keeper <-chan struct{}) {
	look := time.NewTimer(sessionPoll)
	defer look.Stop()
	if h.watch == nil {
		look.Stop() // nothing to watch: its channel never fires
	}
	for {
		select {
		case <-look.C:
			h.watch.look(os.Getpid())
			look.Reset(sessionPoll)
		case s := <-sigs:
			if s != unix.SIGCHLD {
				h.forward(s.(syscall.Signal))
			} else if h.reap() {
				return
			}
		case <-app:
			h.appGone(sigs)
			return
		case <-keeper:
			keeper = nil // it exits as the command did, or was killed
			if !h.reaped {
				h.killAll()
				return
			}
		}
	}
}

// start starts the command as the spec says, in a process group of its
// own, at the tier, once its session's autogroup (a Setsid keeper's) is at
// the tier's nice value or ownSessionWait has passed.
func (h *holder) start() helperStatus {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return statusOf(os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err))
	}
	// Out of the keeper's group: a signal to that group is the keeper's to
	// relay, once.
	_ = unix.Setpgid(0, 0)
	spec := h.spec
	set := settingFor(spec.Tier, spec.Mode)
	var steps []stepStatus
	if spec.Cgroup == "" || set.nice == 0 && !set.idle { // in the lever's cgroup autogroups weigh nothing
		h.watch = newSessionWatch(set.nice, spec.AppAutogroup, spec.Path)
	}
	if spec.Session && h.watch != nil {
		if err := h.watch.settle(os.Getpid(), ownSessionWait); err != nil {
			steps = append(steps, stepOf(err))
		}
	}
	cmd := h.command()
	o := &startOpts{cgroup: spec.Cgroup, fg: -1, ptrace: func() bool { return spec.Ptrace }, fork: forkExec,
		report: func(err error) { steps = append(steps, stepOf(err)) }}
	if spec.Foreground {
		o.fg = spec.Ctty
	}
	if spec.Cgroup != "" {
		o.sub = "agent-" + strconv.Itoa(os.Getpid())
	}
	err := startAt(cmd, set, o)
	h.cgroup = o.dir
	if err != nil {
		h.removeCgroup()
		st := statusOf(err)
		st.Leaf, st.Lever = o.leaf, leverOf(o.lever) // the leaf's, told even so
		return st
	}
	h.agent = o.pid // reaped below, with whatever else comes to the holder
	st := helperStatus{Holder: os.Getpid(), Agent: h.agent, AgentStart: startTime(h.agent), Cgroup: h.cgroup, Steps: steps,
		Leaf: o.leaf, Lever: leverOf(o.lever)}
	if h.cgroup != "" {
		_, _ = unix.Write(h.keeper, []byte("cgroup "+h.cgroup+"\n"))
	}
	return st
}

// command is the command the spec names, with the holder's stdio and
// ExtraFiles, which are the command's.
func (h *holder) command() *exec.Cmd {
	s := h.spec
	cmd := &exec.Cmd{Path: s.Path, Args: s.Args, Env: s.Env, Dir: s.Dir, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	for fd := 3; fd < 3+s.Extra; fd++ {
		var f *os.File
		if h.extra[fd] {
			f = os.NewFile(uintptr(fd), "fd "+strconv.Itoa(fd))
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, f) // nil: an entry the app left nil, closed in the command
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// forkExec starts cmd, which holds nothing os/exec must copy (its stdio and
// ExtraFiles are descriptors), with syscall.ForkExec: os/exec's first start
// in a process forks once more (os, checkPidfd), and the holder starts one
// command. Its error is os/exec's: fork/exec <path>.
func forkExec(cmd *exec.Cmd) (int, error) {
	files := []uintptr{0, 1, 2}
	for _, f := range cmd.ExtraFiles {
		fd := ^uintptr(0) // closed in the command
		if f != nil {
			fd = f.Fd()
		}
		files = append(files, fd)
	}
	pid, err := syscall.ForkExec(cmd.Path, cmd.Args, &syscall.ProcAttr{Dir: cmd.Dir, Env: cmd.Env, Files: files, Sys: cmd.SysProcAttr})
	if err != nil {
		return 0, &fs.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	return pid, nil
}

// ownSessionWait bounds how long a Setsid command's start waits for the
// kernel's rate limit on its session's autogroup: five seconds is a burst
// of about fifty Setsid starts at once. The holder keeps trying after.
const ownSessionWait = 5 * time.Second

// reap reaps every child that exited, tells the keeper how the command
// ended once it has, and reports whether the command has and nothing else
// is left.
func (h *holder) reap() bool {
	none := reapAll(func(pid int, ws unix.WaitStatus) {
		if pid == h.agent && !h.reaped {
			h.reaped = true
			_, _ = unix.Write(h.keeper, fmt.Appendf(nil, "exit %d\n", uint32(ws)))
		}
	})
	return none && h.reaped
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

// appGone ends the tree once the app is gone: a command with a parent-death
// signal of its own gets it, and the tree KillAfter to end by itself;
// then everything left is killed.
func (h *holder) appGone(sigs <-chan os.Signal) {
	if sig := h.spec.Pdeathsig; sig != 0 && !h.reaped {
		_ = unix.Kill(h.agent, sig)
		grace := time.NewTimer(h.spec.KillAfter)
		defer grace.Stop()
		for waiting := true; waiting; {
			select {
			case <-grace.C:
				waiting = false
			case s := <-sigs:
				if s == unix.SIGCHLD && h.reap() {
					return
				}
			}
		}
	}
	h.killAll()
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

func (h *holder) removeCgroup() {
	if h.cgroup != "" {
		_ = os.Remove(h.cgroup)
	}
}
