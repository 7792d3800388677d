//go:build linux

package qos

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// startHeld starts cmd through the keeper and the holder (keeper_linux.go,
// holder_linux.go): the app forks the keeper with cmd's SysProcAttr, as
// cmd.Process; the keeper forks the holder; the holder starts the command
// at the tier and tells the app, on a socket, its pid or why it did not
// start. Start returns once it knows. The app keeps its end of the socket
// open while the command's tree runs: when the app ends, however it ends,
// the holder reads EOF and kills the tree.
func (g *Group) startHeld(cmd *exec.Cmd, t Tier, m Mode) (member, error) {
	if cmd.Err != nil || cmd.Path == "" {
		return nil, cmd.Start() // its error: the lookup's, or "no command"
	}
	a := cmd.SysProcAttr
	if a.Ptrace {
		return nil, fmt.Errorf("qos: start %s: SysProcAttr.Ptrace is tied to the starting thread, which Start retires", cmd.Path)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("qos: start %s: socketpair: %w", cmd.Path, err)
	}
	life, theirs := fds[0], os.NewFile(uintptr(fds[1]), "qos holder socket")
	s := settingFor(t, m)
	spec := helperSpec{Path: cmd.Path, Args: cmd.Args, Env: cmd.Environ(), Extra: len(cmd.ExtraFiles),
		Tier: t, Mode: m, Cgroup: g.Cgroup, Foreground: a.Setctty || a.Foreground, Ctty: a.Ctty,
		Autogroup: (a.Setsid || a.Setctty) && s.nice > 0 && autogroupOn()}
	if s.nice > 0 && autogroupOn() {
		spec.AppAutogroup, _, _ = autogroup(os.Getpid()) // for the holder's session watch too
	}
	err = startKeeper(cmd, theirs)
	_ = theirs.Close()
	if err != nil {
		_ = unix.Close(life)
		return nil, err
	}
	st, err := exchange(life, spec)
	if err == nil {
		err = st.err(spec.Path)
	}
	var holder proc
	if err == nil {
		holder, err = findHolder(cmd.Process.Pid, st.Holder)
	}
	if err == nil {
		_, err = unix.Write(life, []byte{1}) // the holder waits for this before it may exit
	}
	if err != nil {
		_ = unix.Close(life) // the holder, if it runs, kills what it started
		_ = cmd.Wait()
		cmd.Process, cmd.ProcessState = nil, nil
		return nil, err
	}
	g.afterHeld(cmd, spec, st, s.nice)
	mem := &heldMember{cmd: cmd, exit: openPidfd(cmd.Process.Pid), holder: holder,
		agent: st.Agent, life: life, cgroup: st.Cgroup, send: g.sys.send}
	remember(mem)
	return mem, nil
}

// afterHeld reports the steps the holder could not take and queues the one
// it left to the app: the autogroup nice of the keeper's new session, when
// the kernel's rate limit refused the holder's write (the holder writes it
// before the command starts). The keeper leads that session, so the write
// goes through it while it runs.
func (g *Group) afterHeld(cmd *exec.Cmd, spec helperSpec, st helperStatus, nice int) {
	for _, f := range st.Steps {
		pid := st.Agent
		if f.Keeper {
			pid = cmd.Process.Pid
		}
		serr := &stepError{path: cmd.Path, pid: pid, step: f.Step, err: f.err()}
		autogroups.fail(pid, startTime(pid), serr)
		g.report(serr)
	}
	if !spec.Autogroup || !st.Refused {
		return
	}
	pid := cmd.Process.Pid
	s := newSession(pid, pid, nice, cmd.Path)
	s.report = g.report
	autogroups.add(s)
}

// startKeeper starts the keeper as cmd, with sock as its last extra file:
// cmd's Path, Args, Env and ExtraFiles are the keeper's for the call, and
// the caller's again after. It forks from a goroutine of its own, whose
// thread is none the caller lowered (Start inside Do): the keeper and the
// holder run at the app's priority, since they wait and must act at once
// when the app ends.
func startKeeper(cmd *exec.Cmd, sock *os.File) error {
	path, args, env, extra, attr := cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr
	defer func() { cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles, cmd.SysProcAttr = path, args, env, extra, attr }()
	keeper := *attr
	keeper.Pdeathsig = 0 // the holder watches the app; the keeper needs no kept thread
	cmd.Path, cmd.Args = selfExe, []string{"qos-keeper"}
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=keeper:%d", helperEnvVar, 3+len(extra)))
	if raceEnabled {
		cmd.Env = append(cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	cmd.ExtraFiles = append(extra[:len(extra):len(extra)], sock)
	cmd.SysProcAttr = &keeper
	done := make(chan error, 1)
	go func() { done <- cmd.Start() }()
	return <-done
}

// exchange sends the spec on the app's end of the socket and reads the
// holder's answer.
func exchange(fd int, spec helperSpec) (helperStatus, error) {
	var st helperStatus
	if err := sendJSON(fd, spec); err != nil {
		return st, fmt.Errorf("qos: start %s: send to the holder: %w", spec.Path, err)
	}
	if err := recvJSON(fd, &st); err != nil {
		return st, fmt.Errorf("qos: start %s: the keeper or the holder ended before it started: %w", spec.Path, err)
	}
	return st, nil
}

// findHolder returns the holder the answer names, checked to be the
// keeper's child: a pid read from a socket could name a process that
// exited since and whose pid was reused.
func findHolder(keeper, pid int) (proc, error) {
	p, ok := readProc(pid)
	if !ok || p.ppid != keeper {
		return proc{}, fmt.Errorf("qos: the holder (pid %d) is gone", pid)
	}
	return p, nil
}

// held maps a keeper's pid to its member, for Inspect.
var held struct {
	mu sync.Mutex
	by map[int]*heldMember
}

func remember(m *heldMember) {
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.by == nil {
		held.by = map[int]*heldMember{}
	}
	held.by[m.cmd.Process.Pid] = m
}

func forget(m *heldMember) {
	held.mu.Lock()
	defer held.mu.Unlock()
	if m.cmd.Process != nil && held.by[m.cmd.Process.Pid] == m {
		delete(held.by, m.cmd.Process.Pid)
	}
}

// heldBy returns the holder and command pids of the keeper with pid: one a
// Group started in this process, or, read from /proc, a process named
// qos-keeper whose child is named qos-holder (another process's Group),
// whose command is the holder's oldest child (what it adopted started
// later). Once the command itself has exited while its tree runs on, agent
// is the oldest live process of that tree, which stands for it.
func heldBy(pid int) (holder, agent int, ok bool) {
	held.mu.Lock()
	m := held.by[pid]
	held.mu.Unlock()
	if m != nil && !m.exit.exited() {
		if p, ok := readProc(m.agent); ok && p.live() && p.ppid == m.holder.pid {
			return m.holder.pid, m.agent, true
		}
		return oldestBelow(m.holder.pid)
	}
	k, ok := readProc(pid)
	if !ok || k.comm != "qos-keeper" {
		return 0, 0, false
	}
	procs, err := allProcs()
	if err != nil {
		return 0, 0, false
	}
	var h proc
	for _, p := range procs {
		if p.ppid == pid && p.comm == "qos-holder" {
			h = p
		}
	}
	if h.pid == 0 {
		return 0, 0, false
	}
	return oldestBelow(h.pid)
}

// oldestBelow returns holder and the oldest live process of the tree below
// it: the command while it runs, else what it left.
func oldestBelow(holder int) (int, int, bool) {
	tree, err := treeOf(holder)
	if err != nil {
		return 0, 0, false
	}
	var a proc
	for _, p := range tree {
		if a.pid == 0 || p.start < a.start || p.start == a.start && p.ppid == holder {
			a = p
		}
	}
	return holder, a.pid, a.pid != 0
}

// heldMember is a command a Group started through the keeper and the
// holder: its whole tree is below the holder.
type heldMember struct {
	cmd    *exec.Cmd
	exit   pidfd     // cmd.Process: the keeper
	holder proc      // the holder, below which the whole tree is
	agent  int       // the command's own pid
	life   int       // the app's end of the holder's socket: closing it ends the tree; -1 once closed
	cgroup string    // the command's own cgroup, or ""
	send   signaller // see groupSys

	// Used by Stop, one call at a time.
	killed  killedSet
	refused map[int]proc
}

func (m *heldMember) pid() int { return m.cmd.Process.Pid }

// done reports whether the keeper has exited: it exits once the holder
// found nothing left.
func (m *heldMember) done() bool { return m.exit.exited() }

func (m *heldMember) close() {
	m.exit.close()
	m.release()
	forget(m)
}

// tree returns the live processes below the holder, and all processes as
// read for it.
func (m *heldMember) tree() (tree, procs []proc) {
	procs, _ = allProcs()
	// The holder, checked to be ours: once it exited and the keeper
	// reaped it, its pid could be another process's.
	if h, ok := readProc(m.holder.pid); !ok || h.start != m.holder.start || h.ppid != m.cmd.Process.Pid {
		return nil, procs
	}
	return liveBelow(procs, m.holder.pid), procs
}

func (m *heldMember) terminate() {
	if !m.done() {
		tree, procs := m.tree()
		_, _ = signalTree(tree, procs, unix.SIGTERM, m.send)
	}
}

func (m *heldMember) kill() []string {
	tree, procs := m.tree()
	return m.killed.note(killProcs(tree, procs, m.cgroup, m.send, &m.refused))
}

func (m *heldMember) stuck() []string {
	if len(m.refused) == 0 || m.done() {
		return nil
	}
	tree, _ := m.tree()
	return stuckIn(tree, m.refused)
}

// release lets go of a held tree that Stop cannot end: the holder, reading
// EOF, kills what it can and exits, and so does the keeper, so that
// cmd.Wait returns; what refused SIGKILL runs on, reparented to init.
func (m *heldMember) release() {
	if m.life >= 0 {
		_ = unix.Close(m.life)
		m.life = -1
	}
}
