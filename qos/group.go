package qos

import (
	"context"
	"errors"
	"fmt"
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

// ErrNotPermitted is wrapped by the error of a [Group.Stop] that found,
// in a command's tree, processes it may not signal (EPERM, kill(2)): one
// that changed its real and saved user ids, as sudo does, is no longer the
// app's user's. The error names them. Stop does not wait for them; on
// Linux with [Main] the Group lets go of such a tree (its helpers exit, so
// cmd.Wait returns) and they run on.
var ErrNotPermitted = errors.New("qos: stop: not permitted to kill")

// DefaultKillAfter is how long [Group.Stop] waits after SIGTERM before it
// sends SIGKILL, for a zero [Group.KillAfter].
const DefaultKillAfter = time.Second

// A Group starts an app's agents through [Options.Start] and ends them, and
// every process they start, with the app: at an orderly quit through
// [Group.Stop], which fits a quit hook as flush.Func(group.Stop), and when
// the app dies without one (a crash, a panic, SIGKILL).
//
// Start gives each command a process group of its own (SysProcAttr.Setpgid)
// unless its SysProcAttr sets Setsid, Setpgid or Foreground. On Linux, in
// an app whose main calls [Main] first, each command's whole tree is held:
// what it starts stays reachable in any process group or session, through
// double forks and daemons, and dies within a second of the app (see the
// package documentation, "Agents and the app"); a command with a Chroot,
// a Credential or CLONE_NEWPID in its SysProcAttr is not held, as without
// Main. Without Main, Stop on Linux reaches the command's process group
// and the descendants it can still find, and a parent-death signal
// (SIGKILL) ends the command itself with the app. On macOS and other Unix
// systems Stop signals the command's process group only (what left it is
// not reached), and it sees the command exit only once the caller's
// cmd.Wait has reaped it (kill(2) with signal 0 succeeds on a zombie). On
// Windows each command runs in a job object that ends its tree with the
// app or at Stop.
//
// The zero Group is ready to use; its methods are safe for concurrent use.
// A Group must not be copied after first use.
type Group struct {
	// Options is what Start passes to [Options.Start]. Zero: the defaults.
	Options Options
	// KillAfter is how long Stop waits for the commands' trees to exit after
	// SIGTERM before it sends SIGKILL; Stop sends it sooner, halfway to its
	// context's deadline, when that comes first. Zero: [DefaultKillAfter].
	KillAfter time.Duration

	mu       sync.Mutex // protects the fields below
	members  []*member
	starting int           // Starts under way
	idle     chan struct{} // closed when starting drops to 0, if Stop waits for it
	stopped  bool
}

// Start starts cmd as [Options.Start] does, with the Group's Options, in a
// process group of its own (see [Group]), and adds it to the Group. Once Stop
// has been called, Start starts nothing and returns an error wrapping
// [ErrGroupStopped]. The caller still owns cmd: it must call cmd.Wait, as
// for any started command; with Main on Linux, Wait returns once the
// command and everything it started have exited, with the command's own
// status.
func (g *Group) Start(cmd *exec.Cmd, t Tier, m Mode) error {
	m, err := m.check("the mode passed to Start")
	if err != nil {
		return err
	}
	if err := t.check(); err != nil {
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
// exited after SIGKILL; or an error wrapping ctx's error that names the
// commands still running. A second Stop stops what the first could not.
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
	ms := append([]*member(nil), g.members...)
	g.mu.Unlock()

	for _, m := range ms {
		m.terminate()
	}
	kill := g.killTimer(ctx)
	defer kill.Stop()
	if waitDone(ctx, ms, kill.C, nil, (*member).done) {
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
	settled := waitDone(ctx, ms, nil, killAll, func(m *member) bool { return m.done() || m.stuck() != nil })
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
	d := g.KillAfter
	if d <= 0 {
		d = DefaultKillAfter
	}
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return time.NewTimer(d)
}

// pruned drops the members that are done and returns Stop's error: nil,
// an error naming killed (ErrKilled) and refused (ErrNotPermitted), or, if
// err is not nil and commands still run, an error naming them that wraps
// err.
func (g *Group) pruned(killed, refused []string, err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = prune(g.members)
	if err != nil && len(g.members) > 0 {
		pids := make([]int, len(g.members))
		for i, m := range g.members {
			pids[i] = m.cmd.Process.Pid
		}
		return fmt.Errorf("qos: stop: %d commands still running after SIGKILL (pids %v): %w", len(pids), pids, err)
	}
	if len(killed) > 0 || len(refused) > 0 {
		d := g.KillAfter
		if d <= 0 {
			d = DefaultKillAfter
		}
		return &killedError{after: d, killed: killed, refused: refused}
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
	return target == ErrKilled && len(e.killed) > 0 || target == ErrNotPermitted && len(e.refused) > 0
}

// prune returns ms without the members that are done, which it closes.
func prune(ms []*member) []*member {
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
func waitDone(ctx context.Context, ms []*member, until <-chan time.Time, each func(), settled func(*member) bool) bool {
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
