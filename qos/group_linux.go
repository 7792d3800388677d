//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupSys is what a Group keeps on Linux.
type groupSys struct {
	send   signaller         // how its members signal a process; nil: sendSignal (a test refuses some)
	levers map[string]string // the I/O lever failure last told for each tier leaf; under Group.mu
}

// tellLever reports err, the I/O lever's failure at a Start into leaf,
// but not again while the leaf fails the same way: the failure is the
// leaf's, which every later Start in the tier meets, and telling it at
// each would bury the app's log ([Inspect] still names, for each process,
// the lever it goes without). A Start that got the lever (err nil) ends
// the run, so a failure after it is told again, as statefile tells a
// save's.
func (g *Group) tellLever(leaf string, err error) {
	if leaf == "" {
		return
	}
	g.mu.Lock()
	last, told := g.sys.levers[leaf]
	tell := err != nil && (!told || last != err.Error())
	switch {
	case err == nil:
		delete(g.sys.levers, leaf)
	case tell:
		if g.sys.levers == nil {
			g.sys.levers = make(map[string]string)
		}
		g.sys.levers[leaf] = err.Error()
	}
	g.mu.Unlock()
	if tell {
		g.report(err)
	}
}

func (g *Group) startMember(cmd *exec.Cmd, t Tier, m Mode) (member, error) {
	caller := cmd.SysProcAttr
	defer func() { cmd.SysProcAttr = caller }()
	withGroup(cmd)
	if hooked.Load() && heldable(cmd.SysProcAttr) {
		return g.startHeld(cmd, t, m)
	}
	switch {
	case !hooked.Load():
		g.tellOnce(errNoMain)
	default:
		g.report(fmt.Errorf("qos: start %s: not held (%s in its SysProcAttr): what it starts in other "+
			"process groups or sessions may outlive the app", cmd.Path, notHeldWhy(cmd.SysProcAttr)))
	}
	dieWithApp(cmd)
	group := ownGroup(cmd)
	o := &startOpts{cgroup: g.Cgroup, fg: -1, report: g.report}
	err := startAt(cmd, settingFor(t, m), o)
	g.tellLever(o.leaf, o.lever) // the leaf's, whether or not the command started
	if err != nil {
		return nil, err
	}
	return &plainMember{cmd: cmd, exit: openPidfd(cmd.Process.Pid), group: group, send: g.sys.send}, nil
}

// heldable reports whether a command with attr can run below the keeper
// and the holder, which are forked with attr themselves and re-execute this
// binary: not in a chroot (where /proc/self/exe may not resolve), not as
// another user (Credential: the helpers would run as that user, who may
// not read this binary or be the app's to signal), and not as the first
// process of a new PID namespace (Cloneflags or Unshareflags
// CLONE_NEWPID: the helpers would see their own pids as the namespace
// numbers them, not as the app does). Such commands start as without
// Main: their process group is reached, their parent-death signal ends the
// command itself with the app, but what leaves the group is not held.
func heldable(attr *syscall.SysProcAttr) bool {
	return attr.Chroot == "" && attr.Credential == nil &&
		attr.Cloneflags&unix.CLONE_NEWPID == 0 && attr.Unshareflags&unix.CLONE_NEWPID == 0
}

// notHeldWhy names what keeps a command from being held.
func notHeldWhy(attr *syscall.SysProcAttr) string {
	switch {
	case attr.Chroot != "":
		return "Chroot"
	case attr.Credential != nil:
		return "Credential"
	}
	return "CLONE_NEWPID"
}

// errNoMain is what a Group says at its first Start in an app whose main
// does not call Main.
var errNoMain = errors.New("qos: Group.Start: main does not call qos.Main first, so what an agent starts " +
	"in other process groups or sessions is not held and may outlive the app")

// dieWithApp sets SIGKILL as cmd's parent-death signal unless it has one,
// in a copy of SysProcAttr (the caller's may be shared).
func dieWithApp(cmd *exec.Cmd) {
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		if cmd.SysProcAttr.Pdeathsig != 0 {
			return
		}
		attr = *cmd.SysProcAttr
	}
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = &attr
}

// plainMember is a command a Group started itself, without the helpers (an
// app without Main, or a command that cannot be held): Stop reaches its
// process group and the processes below it that it has seen, also once
// they were reparented away from it (to init, or a subreaper above the
// app).
type plainMember struct {
	cmd   *exec.Cmd
	exit  pidfd     // the command's
	group bool      // the command leads a process group of its own
	send  signaller // see groupSys

	// Used by Stop, one call at a time.
	seen    map[int]proc // what Stop has seen of the tree
	killed  killedSet    // sent SIGKILL
	refused map[int]proc // refused SIGKILL (EPERM), by pid
}

func (m *plainMember) pid() int { return m.cmd.Process.Pid }

func (m *plainMember) done() bool {
	if !m.exit.exited() {
		return false
	}
	for pid, p := range m.seen {
		if !exited(pid, p.start) {
			return false
		}
	}
	return true
}

func (m *plainMember) close() { m.exit.close() }

// tree returns the processes of the command's tree, live now (the command,
// its descendants, the members of its process group, and whatever was seen
// before and still runs, with their descendants), and all processes as read
// for it.
func (m *plainMember) tree() (tree, procs []proc) {
	procs, _ = allProcs()
	roots := []int{m.cmd.Process.Pid}
	if m.seen == nil {
		m.seen = map[int]proc{}
	}
	for pid, p := range m.seen {
		if exited(pid, p.start) {
			delete(m.seen, pid)
		} else {
			roots = append(roots, pid)
		}
	}
	add := func(p proc) {
		if _, dup := m.seen[p.pid]; p.live() && p.pid != os.Getpid() && !dup {
			m.seen[p.pid] = p
		}
	}
	for _, p := range procs {
		if p.pid == m.cmd.Process.Pid || m.group && p.pgid == m.cmd.Process.Pid {
			add(p)
		}
	}
	for _, p := range descendants(procs, roots...) {
		add(p)
	}
	for pid, p := range m.seen {
		if running(pid, p.start) {
			tree = append(tree, p) // what can still be signalled
		}
	}
	return tree, procs
}

func (m *plainMember) terminate() {
	if !m.done() {
		tree, procs := m.tree()
		_, _ = signalTree(tree, procs, unix.SIGTERM, m.send)
	}
}

func (m *plainMember) kill() []string {
	tree, procs := m.tree()
	return m.killed.note(killProcs(tree, procs, "", m.send, &m.refused))
}

func (m *plainMember) stuck() []string {
	if len(m.refused) == 0 || m.done() {
		return nil
	}
	tree, _ := m.tree()
	return stuckIn(tree, m.refused)
}

func (m *plainMember) release() {}

// killProcs sends SIGKILL to tree, through cgroup if it is not "" (its
// cgroup.kill signals with the kernel's authority, so nothing refuses it,
// and reaches what the tree forks meanwhile), else one by one, and returns
// those it sent it to. Those that refuse it (EPERM) are added to *refused.
func killProcs(tree, procs []proc, cgroup string, send signaller, refused *map[int]proc) []proc {
	if cgroup != "" && writeFile(filepath.Join(cgroup, "cgroup.kill"), "1") == nil {
		return tree
	}
	sent, no := signalTree(tree, procs, unix.SIGKILL, send)
	if *refused == nil {
		*refused = map[int]proc{}
	}
	for _, p := range no {
		(*refused)[p.pid] = p
	}
	return sent
}

// note records sent in k and names those not sent SIGKILL before.
func (k *killedSet) note(sent []proc) []string {
	if *k == nil {
		*k = killedSet{}
	}
	var named []string
	for _, p := range sent {
		if (*k)[p.pid] != p.start {
			(*k)[p.pid] = p.start
			named = append(named, p.String())
		}
	}
	return named
}

// killedSet is what Stop sent SIGKILL to: pid to start time.
type killedSet map[int]uint64

// stuckIn returns tree's processes, named, if every one of them is one that
// refused SIGKILL: Stop cannot end them and does not wait for them. It
// returns nil while others run, or when none refused.
func stuckIn(tree []proc, refused map[int]proc) []string {
	var named []string
	for _, p := range tree {
		if r, ok := refused[p.pid]; !ok || r.start != p.start {
			return nil
		}
		named = append(named, p.String())
	}
	return named
}
