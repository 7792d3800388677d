package qos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ErrGroupStopped is returned (wrapped) by [Group.Start] once [Group.Stop]
// has been called.
var ErrGroupStopped = errors.New("qos: the group is stopped")

// ErrKilled is wrapped by the error of a [Group.Stop] that ended every
// command's tree but had to SIGKILL some of its processes, which the error
// names: they did not exit within [Group.KillAfter] of SIGTERM.
var ErrKilled = errors.New("qos: stop: killed after SIGTERM")

// defaultKillAfter is how long Stop waits after SIGTERM before it sends
// SIGKILL, for a zero Group.KillAfter.
const defaultKillAfter = time.Second

// A Group starts an app's agents and ends them, and every process they
// start, with the app: at an orderly quit through [Group.Stop], which fits
// a quit hook as flush.Func(group.Stop), and when the app dies without one
// (a crash, a panic, SIGKILL). Its fields are its options; the zero Group
// is ready to use, and its methods are safe for concurrent use. A Group
// must not be copied after first use.
//
// Start gives each command a process group of its own (SysProcAttr.Setpgid)
// unless its SysProcAttr sets Setsid, Setpgid or Foreground. On Linux, in
// an app whose main calls [Main] first, each command's whole tree is held:
// what it starts stays reachable in any process group or session, through
// double forks and daemons, and dies within a second of the app (see the
// package documentation). A command with a Chroot, a Credential or
// CLONE_NEWPID in its SysProcAttr is not held, as without Main. Without
// Main, Stop on Linux reaches the command's process group and the
// descendants it can still find, and a parent-death signal (SIGKILL) ends
// the command itself with the app. On macOS and other Unix systems Stop
// signals the command's process group only (what left it is not reached),
// and it sees the command exit only once the caller's cmd.Wait has reaped
// it (kill(2) with signal 0 succeeds on a zombie). On Windows each command
// runs in a job object that ends its tree with the app or at Stop.
type Group struct {
	// Cgroup (Linux only) is a cgroup v2 directory delegated to this
	// process, with the cpu controller available: Start puts each lowered
	// command straight into a leaf under it (clone3 CLONE_INTO_CGROUP), a
	// leaf with cpu.idle 1 for SCHED_IDLE tiers and cpu.weight.nice set to
	// the tier's nice value otherwise, and within it a cgroup of the
	// command's own, which Stop and the app's end kill at once
	// (cgroup.kill). A cgroup's weight competes with the GUI's whatever
	// sessions the command's tree makes. If the cgroup cannot be prepared,
	// Start returns an error that says what is missing and starts nothing
	// (see [JoinLeaf]). A command whose SysProcAttr.UseCgroupFD is set
	// keeps its own cgroup. Zero: no cgroup.
	Cgroup string

	// KillAfter is how long Stop waits for the commands' trees to exit after
	// SIGTERM before it sends SIGKILL; Stop sends it sooner, halfway to its
	// context's deadline, when that comes first. Zero: one second.
	KillAfter time.Duration

	// OnError is called with each error that reaches the app after Start
	// returned nil, or that Start did not return because the command
	// started: a step qos took for a command after it started and that
	// failed (the command runs without it: Linux, its move to SCHED_IDLE or
	// its session's autogroup nice value), and the notice that this Group
	// holds less than it would with [Main]. It may be called from another
	// goroutine, one call at a time; it must not block for long. It takes
	// the same function as statefile's Options.OnError, so an app shows
	// both the same way. Nil: each error is logged to [slog.Default].
	OnError func(error)

	mu       sync.Mutex // protects the fields below
	members  []member
	starting int           // Starts under way
	idle     chan struct{} // closed when starting drops to 0, if Stop waits for it
	stopped  bool
	told     bool     // tellOnce has told
	sys      groupSys // what the platform's Group keeps
}

// member is a command the Group started, with what it started.
type member interface {
	pid() int        // cmd.Process.Pid, which Stop's error names
	done() bool      // whether the command and all of its tree have exited
	terminate()      // SIGTERM to every process of the tree
	kill() []string  // SIGKILL to what still runs; names those it had not yet killed
	stuck() []string // what is left once all of it refused SIGKILL, or nil
	release()        // lets go of a tree Stop cannot end
	close()          // frees what the member holds, once it is done
}

// tellOnce reports err at the Group's first call.
func (g *Group) tellOnce(err error) {
	g.mu.Lock()
	told := g.told
	g.told = true
	g.mu.Unlock()
	if !told {
		g.report(err)
	}
}

// report hands err to OnError, or logs it.
func (g *Group) report(err error) {
	if g.OnError != nil {
		g.OnError(err)
		return
	}
	slog.Default().Warn("qos: error", slog.Any("err", err))
}

// Start starts cmd as [Start] does, in tier t under mode m, in a process
// group of its own (see [Group]), and adds it to the Group. Once Stop has
// been called, Start starts nothing and returns an error wrapping
// [ErrGroupStopped]. The caller still owns cmd: it must call cmd.Wait, as
// for any started command.
func (g *Group) Start(cmd *exec.Cmd, t Tier, m Mode) error {
	m, err := args(t, m)
	if err != nil {
		return err
	}
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return fmt.Errorf("qos: start %s: %w", cmd.Path, ErrGroupStopped)
	}
	g.starting++
	g.members = prune(g.members)
	g.mu.Unlock()

	mem, err := g.startMember(cmd, t, m)

	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		g.members = append(g.members, mem)
	}
	g.starting--
	if g.starting == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
	return err
}

// Stop stops every command of the Group, and every process each started,
// and returns when all have exited or when ctx ends. Each process of each
// tree gets SIGTERM (see [Group] for what is reached where); whatever still
// runs after [Group.KillAfter] (or halfway to ctx's deadline, if sooner)
// gets SIGKILL, again until nothing does. On Windows, which has no SIGTERM,
// each command's job is terminated at once (TerminateJobObject).
//
// Stop also waits for Starts under way, and afterwards the Group starts
// nothing more. It returns nil when everything exited on SIGTERM; an error
// wrapping [ErrKilled] that names what had to be killed when everything
// exited after SIGKILL; an error wrapping [fs.ErrPermission] that names
// the processes it may not signal (another user's, as after sudo), which it
// leaves running and does not wait for; or an error wrapping ctx's error
// that names the commands still running. A second Stop stops what the first
// could not.
func (g *Group) Stop(ctx context.Context) error {
	g.mu.Lock()
	g.stopped = true
	var idle chan struct{}
	if g.starting > 0 {
		if g.idle == nil {
			g.idle = make(chan struct{})
		}
		idle = g.idle
	}
	g.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
		}
	}
	g.mu.Lock()
	g.members = prune(g.members)
	ms := append([]member(nil), g.members...)
	g.mu.Unlock()

	for _, m := range ms {
		m.terminate()
	}
	kill := g.killTimer(ctx)
	defer kill.Stop()
	if waitDone(ctx, ms, kill.C, nil, member.done) {
		return g.pruned(nil, nil, nil)
	}
	var killed []string
	killAll := func() {
		for _, m := range ms {
			if !m.done() {
				killed = append(killed, m.kill()...)
			}
		}
	}
	killAll()
	settled := waitDone(ctx, ms, nil, killAll, func(m member) bool { return m.done() || m.stuck() != nil })
	var refused []string
	for _, m := range ms {
		if r := m.stuck(); r != nil {
			refused = append(refused, r...)
			m.release()
		}
	}
	if settled {
		return g.pruned(killed, refused, nil)
	}
	return g.pruned(killed, refused, ctx.Err())
}

// killTimer returns the timer for the SIGKILL: KillAfter from now, or
// halfway to ctx's deadline if that is sooner.
func (g *Group) killTimer(ctx context.Context) *time.Timer {
	d := g.killAfter()
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return time.NewTimer(d)
}

// killAfter is KillAfter, or its default.
func (g *Group) killAfter() time.Duration {
	if g.KillAfter <= 0 {
		return defaultKillAfter
	}
	return g.KillAfter
}

// pruned drops the members that are done and returns Stop's error: nil,
// an error naming killed (ErrKilled) and refused (fs.ErrPermission), or, if
// err is not nil and commands still run, an error naming them that wraps
// err.
func (g *Group) pruned(killed, refused []string, err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = prune(g.members)
	if err != nil && len(g.members) > 0 {
		pids := make([]int, len(g.members))
		for i, m := range g.members {
			pids[i] = m.pid()
		}
		return fmt.Errorf("qos: stop: %d commands still running after SIGKILL (pids %v): %w", len(pids), pids, err)
	}
	if len(killed) > 0 || len(refused) > 0 {
		return &killedError{after: g.killAfter(), killed: killed, refused: refused}
	}
	return nil
}

// killedError is Stop's error when it had to send SIGKILL.
type killedError struct {
	after   time.Duration
	killed  []string // "pid 12 (sleep)"
	refused []string // those it may not signal
}

func (e *killedError) Error() string {
	var parts []string
	if len(e.killed) > 0 {
		parts = append(parts, fmt.Sprintf("%d processes still ran %v after SIGTERM and were killed: %s",
			len(e.killed), e.after, strings.Join(e.killed, ", ")))
	}
	if len(e.refused) > 0 {
		parts = append(parts, fmt.Sprintf("%d processes could not be killed (EPERM: another user's, as after sudo) and still run: %s",
			len(e.refused), strings.Join(e.refused, ", ")))
	}
	return "qos: stop: " + strings.Join(parts, "; ")
}

func (e *killedError) Is(target error) bool {
	return target == ErrKilled && len(e.killed) > 0 || target == fs.ErrPermission && len(e.refused) > 0
}

// prune returns ms without the members that are done, which it closes.
func prune(ms []member) []member {
	live := ms[:0]
	for _, m := range ms {
		if m.done() {
			m.close()
			continue
		}
		live = append(live, m)
	}
	clear(ms[len(live):])
	return live
}

// exitPoll is how often Stop looks whether the trees have exited.
const exitPoll = 10 * time.Millisecond

// waitDone reports whether every member is settled before ctx ended or
// until fired (nil: never). each, if not nil, runs at every look.
func waitDone(ctx context.Context, ms []member, until <-chan time.Time, each func(), settled func(member) bool) bool {
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		all := true
		for _, m := range ms {
			all = all && settled(m)
		}
		if all {
			return true
		}
		select {
		case <-tick.C:
			if each != nil {
				each()
			}
		case <-until:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
