//go:build linux

package qos

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// member is a command the Group started, held (started through the keeper
// and the holder, held_linux.go) or not (an app without Main).
type member struct {
	cmd   *exec.Cmd
	exit  pidfd // cmd.Process: the keeper, or the command itself
	group bool  // the command leads a process group of its own
	// Held only.
	holder proc   // the holder, below which the whole tree is
	agent  int    // the command's own pid
	life   int    // the app's end of the holder's socket: closing it ends the tree; -1 if not held
	cgroup string // the command's own cgroup, or ""
	// Not held: what Stop has seen of the tree, to reach it after the
	// command exited (its orphans go to init or a subreaper above the app).
	seen    map[int]proc
	killed  map[int]uint64 // sent SIGKILL, by pid: start time
	refused map[int]proc   // refused SIGKILL (EPERM), by pid
}

func (g *Group) startMember(cmd *exec.Cmd, t Tier, m Mode) (*member, error) {
	caller := cmd.SysProcAttr
	defer func() { cmd.SysProcAttr = caller }()
	withGroup(cmd)
	if hooked.Load() && heldable(cmd.SysProcAttr) {
		return g.startHeld(cmd, t, m)
	}
	if !hooked.Load() {
		warnNotHeld(g.Options)
	}
	dieWithApp(cmd)
	group := ownGroup(cmd)
	if err := g.Options.Start(cmd, t, m); err != nil {
		return nil, err
	}
	return &member{cmd: cmd, exit: watchExit(cmd.Process), group: group, life: -1}, nil
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

var warnOnce sync.Once

// warnNotHeld says once per process that Groups hold no trees here.
func warnNotHeld(o Options) {
	warnOnce.Do(func() {
		l := o.Logger
		if l == nil {
			l = slog.Default()
		}
		l.Warn("qos: Group.Start: main does not call qos.Main first, so the processes an agent starts " +
			"in other process groups or sessions are not held and may outlive the app")
	})
}

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

// done reports whether the command and all of its tree have exited: for a
// held one, the keeper exits once the holder found nothing left.
func (m *member) done() bool {
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

func (m *member) close() {
	m.exit.close()
	if m.life >= 0 {
		_ = unix.Close(m.life)
		m.life = -1
	}
	forget(m)
}

// tree returns the processes of the command's tree, live now, and all
// processes as read for it: for a held command those below the holder; for
// one not held, the command, its descendants, the members of its process
// group, and whatever was seen before and still runs (and their
// descendants).
func (m *member) tree() (tree, procs []proc) {
	procs, _ = allProcs()
	if m.life >= 0 {
		// The holder, checked to be ours: once it exited and the keeper
		// reaped it, its pid could be another process's.
		if h, ok := readProc(m.holder.pid); !ok || h.start != m.holder.start || h.ppid != m.cmd.Process.Pid {
			return nil, procs
		}
		return liveBelow(procs, m.holder.pid), procs
	}
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

// terminate sends SIGTERM to every process of the tree.
func (m *member) terminate() {
	if !m.done() {
		tree, procs := m.tree()
		_, _ = signalTree(tree, procs, unix.SIGTERM)
	}
}

// kill sends SIGKILL to every process of the tree, through the command's
// cgroup if it has one (cgroup.kill signals with the kernel's authority, so
// nothing refuses it), else one by one, and returns those it had not sent
// one to yet, as read just before. Those that refuse it (EPERM) are kept
// for stuck.
func (m *member) kill() []string {
	if m.killed == nil {
		m.killed, m.refused = map[int]uint64{}, map[int]proc{}
	}
	tree, procs := m.tree()
	sent, refused := tree, []proc(nil) // cgroup.kill reaches all of them, and what they fork meanwhile
	if m.cgroup == "" || writeFile(filepath.Join(m.cgroup, "cgroup.kill"), "1") != nil {
		sent, refused = signalTree(tree, procs, unix.SIGKILL)
	}
	for _, p := range refused {
		m.refused[p.pid] = p
	}
	var named []string
	for _, p := range sent {
		if m.killed[p.pid] != p.start {
			m.killed[p.pid] = p.start
			named = append(named, p.String())
		}
	}
	return named
}

// stuck returns, once every process left of the tree is one that refused
// SIGKILL, those processes: Stop cannot end them and does not wait for
// them. It returns nil while others run, or when none refused.
func (m *member) stuck() []string {
	if len(m.refused) == 0 || m.done() {
		return nil
	}
	tree, _ := m.tree()
	var named []string
	for _, p := range tree {
		if r, ok := m.refused[p.pid]; !ok || r.start != p.start {
			return nil
		}
		named = append(named, p.String())
	}
	return named
}

// release lets go of a held tree that Stop cannot end: the holder, reading
// EOF, kills what it can and exits, and so does the keeper, so that
// cmd.Wait returns; what refused SIGKILL runs on, reparented to init.
func (m *member) release() {
	if m.life >= 0 {
		_ = unix.Close(m.life)
		m.life = -1
	}
}

// watchExit returns the pidfd that tells whether a started command has
// exited, zombie or reaped.
func watchExit(p *os.Process) pidfd { return openPidfd(p.Pid) }
