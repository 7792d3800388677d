//go:build linux

package qos

import (
	"errors"
	"fmt"
	"io/fs"
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
// the holder reads EOF and ends the tree.
func (g *Group) startHeld(cmd *exec.Cmd, t Tier, m Mode) (member, error) {
	if cmd.Err != nil || cmd.Path == "" {
		return nil, cmd.Start() // its error: the lookup's, or "no command"
	}
	if cmd.SysProcAttr.Ptrace {
		return nil, fmt.Errorf("qos: start %s: SysProcAttr.Ptrace is tied to the starting thread, which Start retires", cmd.Path)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("qos: start %s: socketpair: %w", cmd.Path, err)
	}
	life, theirs := fds[0], os.NewFile(uintptr(fds[1]), "qos holder socket")
	spec := g.spec(cmd, t, m)
	err = startKeeper(cmd, theirs)
	_ = theirs.Close()
	if err != nil {
		_ = unix.Close(life)
		return nil, err
	}
	mem, st, err := handshake(cmd, life, spec)
	if err != nil {
		g.tellLever(st.Leaf, st.lever()) // the leaf's, though the command did not start
		_ = unix.Close(life)             // the holder, if it runs, kills what it started
		_ = cmd.Wait()
		cmd.Process, cmd.ProcessState = nil, nil
		return nil, err
	}
	mem.send = g.sys.send
	g.tellSteps(cmd.Path, st)
	remember(mem)
	return mem, nil
}

// tellSteps reports the steps the holder of the command at path says
// failed: each as the command's, and the I/O lever's as its tier leaf's.
func (g *Group) tellSteps(path string, st helperStatus) {
	for _, f := range st.Steps {
		serr := &stepError{path: path, pid: st.Agent, step: f.Step, err: f.err()}
		autogroups.fail(st.Agent, st.AgentStart, serr)
		g.report(serr)
	}
	g.tellLever(st.Leaf, st.lever())
}

// spec is what the holder is told of cmd.
func (g *Group) spec(cmd *exec.Cmd, t Tier, m Mode) helperSpec {
	a := cmd.SysProcAttr
	s := settingFor(t, m)
	spec := helperSpec{Path: cmd.Path, Args: cmd.Args, Env: cmd.Environ(), Dir: cmd.Dir, Extra: len(cmd.ExtraFiles),
		Tier: t, Mode: m, Cgroup: g.Cgroup, Foreground: a.Setctty || a.Foreground, Ctty: a.Ctty,
		Pdeathsig: a.Pdeathsig, KillAfter: g.killAfter()}
	spec.Ptrace = (s.idle || spec.Foreground) && ptraceUsable()
	if s.nice > 0 && autogroupOn() {
		spec.AppAutogroup, _, _ = autogroup(os.Getpid())         // for the holder's session watch
		spec.Session = (a.Setsid || a.Setctty) && g.Cgroup == "" // in the lever's cgroup autogroups weigh nothing
	}
	return spec
}

// startKeeper starts the keeper as cmd, with sock as its last extra file:
// cmd's Path, Args, Env, Dir, ExtraFiles and SysProcAttr are the keeper's
// for the call, and the caller's again after. The keeper runs in the app's
// directory (the command's is the holder's to enter), without the
// command's parent-death signal (the holder's to send). It forks from a
// goroutine of its own, whose thread is none the caller lowered (Start
// inside Do): the helpers run at the app's priority, since they wait and
// must act at once when the app ends. An error names the command, never
// the helper.
func startKeeper(cmd *exec.Cmd, sock *os.File) error {
	path, args, env, dir, extra, attr := cmd.Path, cmd.Args, cmd.Env, cmd.Dir, cmd.ExtraFiles, cmd.SysProcAttr
	defer func() {
		cmd.Path, cmd.Args, cmd.Env, cmd.Dir, cmd.ExtraFiles, cmd.SysProcAttr = path, args, env, dir, extra, attr
	}()
	keeper := *attr
	keeper.Pdeathsig = 0
	cmd.Path, cmd.Args, cmd.Dir = selfExe, []string{"qos-keeper"}, ""
	cmd.Env = helperEnviron(fmt.Sprintf("keeper:%d:%s", 3+len(extra), extraFiles(extra)))
	if raceEnabled {
		cmd.Env = append(cmd.Env, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	cmd.ExtraFiles = append(extra[:len(extra):len(extra)], sock)
	cmd.SysProcAttr = &keeper
	done := make(chan error, 1)
	go func() { done <- cmd.Start() }()
	err := <-done
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == selfExe {
		pe.Path = path
	}
	return err
}

// handshake sends the spec on the app's end of the socket, reads the
// holder's answer, checks the holder is the keeper's child and lets it go
// on. It returns the member, the answer, or the command's start's error.
func handshake(cmd *exec.Cmd, life int, spec helperSpec) (*heldMember, helperStatus, error) {
	var st helperStatus
	if err := sendJSON(life, spec); err != nil {
		return nil, st, fmt.Errorf("qos: start %s: send to the holder: %w", spec.Path, err)
	}
	if err := recvJSON(life, &st); err != nil {
		return nil, st, fmt.Errorf("qos: start %s: qos's helpers ended before it started: %w", spec.Path, err)
	}
	if err := st.err(); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, st, err // as cmd.Start would say it: fork/exec <path>, chdir <dir>
		}
		return nil, st, fmt.Errorf("qos: start %s: %w", spec.Path, err)
	}
	// The holder's pid came from a socket: it must be the keeper's child,
	// which cannot exit (and be reaped, and its pid reused) before the ack.
	h, ok := readProc(st.Holder)
	if !ok || h.ppid != cmd.Process.Pid {
		return nil, st, fmt.Errorf("qos: start %s: qos's holder (pid %d) is gone", spec.Path, st.Holder)
	}
	m := &heldMember{cmd: cmd, keeper: openPidfd(cmd.Process.Pid), keeperStart: startTime(cmd.Process.Pid),
		holder: h, holderFd: openPidfd(h.pid), agent: st.Agent, agentStart: st.AgentStart, life: life, cgroup: st.Cgroup}
	if _, err := unix.Write(life, []byte{1}); err != nil {
		m.keeper.close()
		m.holderFd.close()
		return nil, st, fmt.Errorf("qos: start %s: qos's holder: %w", spec.Path, err)
	}
	return m, st, nil
}

// held maps a keeper's pid to its member while the member's tree runs, for
// Inspect: once the command exited and the keeper with it, its pid still
// stands for what the command left.
var held struct {
	mu sync.Mutex // protects by
	by map[int]*heldMember
}

func remember(m *heldMember) {
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.by == nil {
		held.by = map[int]*heldMember{}
	}
	held.by[m.pid()] = m
}

func forget(m *heldMember) {
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.by[m.pid()] == m {
		delete(held.by, m.pid())
	}
}

// heldBy returns the holder and the command of the keeper with pid, if it
// is a Group's in this process whose tree still runs: the command while it
// runs, else the oldest live process of its tree, which stands for it. pid
// is the keeper's while /proc shows the keeper there, or nothing.
func heldBy(pid int) (holder, agent int, ok bool) {
	held.mu.Lock()
	m := held.by[pid]
	held.mu.Unlock()
	if m == nil || m.holderFd.exited() {
		return 0, 0, false
	}
	if p, ok := readProc(pid); ok && p.start != m.keeperStart {
		return 0, 0, false // the keeper was reaped and its pid reused
	}
	if running(m.agent, m.agentStart) {
		return m.holder.pid, m.agent, true
	}
	tree, err := treeOf(m.holder.pid)
	if err != nil {
		return 0, 0, false
	}
	var a proc
	for _, p := range tree {
		if a.pid == 0 || p.start < a.start || p.start == a.start && p.ppid == m.holder.pid {
			a = p
		}
	}
	return m.holder.pid, a.pid, a.pid != 0
}

// heldMember is a command a Group started through the keeper and the
// holder: its whole tree is below the holder, which outlives the command
// (and the keeper) while anything of the tree runs.
type heldMember struct {
	cmd         *exec.Cmd
	keeper      pidfd  // cmd.Process
	keeperStart uint64 // its start time
	holder      proc   // the holder, below which the whole tree is
	holderFd    pidfd
	agent       int       // the command's own pid
	agentStart  uint64    // and its start time
	life        int       // the app's end of the holder's socket: closing it ends the tree; -1 once closed
	cgroup      string    // the command's own cgroup, or ""
	send        signaller // see groupSys

	// Used by Stop, one call at a time.
	killed  killedSet
	refused map[int]proc
}

func (m *heldMember) pid() int { return m.cmd.Process.Pid }

// done reports whether the holder has exited, which it does once nothing
// of the tree is left, and the keeper too.
func (m *heldMember) done() bool { return m.holderFd.exited() && m.keeper.exited() }

func (m *heldMember) close() {
	m.keeper.close()
	m.holderFd.close()
	m.release()
	forget(m)
}

// tree returns the live processes below the holder, and all processes as
// read for it.
func (m *heldMember) tree() (tree, procs []proc) {
	procs, _ = allProcs()
	if m.holderFd.exited() {
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
