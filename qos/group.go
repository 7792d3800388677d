package qos

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// ErrGroupStopped is returned (wrapped) by [Group.Start] once [Group.Stop]
// has been called.
var ErrGroupStopped = errors.New("qos: the group is stopped")

// DefaultKillAfter is how long [Group.Stop] waits after SIGTERM before it
// sends SIGKILL, for a zero [Group.KillAfter].
const DefaultKillAfter = time.Second

// A Group starts an app's agents through [Options.Start] and makes them end
// with the app: at an orderly quit through [Group.Stop], which fits a quit
// hook as flush.Func(group.Stop), and on Linux also when the app dies without
// one (a crash, SIGKILL), through the kernel's parent-death signal.
//
// On Linux, Start sets SysProcAttr.Pdeathsig to SIGKILL for a command that
// sets none (prctl(2) PR_SET_PDEATHSIG), in a copy of SysProcAttr. The
// signal reaches the command itself, not the processes it started: give the
// command a process group of its own (SysProcAttr.Setsid or Setpgid) so that
// Stop reaches those, and let the command end its own on SIGTERM. On macOS
// and other Unix systems only Stop ends the commands.
//
// The zero Group is ready to use; its methods are safe for concurrent use.
// A Group must not be copied after first use.
type Group struct {
	// Options is what Start passes to [Options.Start]. Zero: the defaults.
	Options Options
	// KillAfter is how long Stop waits for the commands to exit after
	// SIGTERM before it sends SIGKILL; Stop sends it sooner, halfway to its
	// context's deadline, when that comes first. Zero: [DefaultKillAfter].
	KillAfter time.Duration

	mu       sync.Mutex // protects the fields below
	members  []*member
	starting int           // Starts under way
	idle     chan struct{} // closed when starting drops to 0, if Stop waits for it
	stopped  bool
}

// member is a command the Group started.
type member struct {
	cmd   *exec.Cmd
	group bool // the command leads a process group of its own
	exit  exitWatch
}

// Start starts cmd as [Options.Start] does, with the Group's Options, and
// adds it to the Group. On Linux it sets SysProcAttr.Pdeathsig to SIGKILL
// first if cmd sets no Pdeathsig (see [Group]). Once Stop has been called,
// Start starts nothing and returns an error wrapping [ErrGroupStopped]. The
// caller still owns cmd: it must call cmd.Wait, as for any started command.
func (g *Group) Start(cmd *exec.Cmd, t Tier, m Mode) error {
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return fmt.Errorf("qos: start %s: %w", cmd.Path, ErrGroupStopped)
	}
	g.starting++
	g.members = prune(g.members)
	g.mu.Unlock()

	dieWithApp(cmd)
	err := g.Options.Start(cmd, t, m)

	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		g.members = append(g.members, &member{cmd: cmd, group: ownGroup(cmd), exit: watchExit(cmd.Process)})
	}
	g.starting--
	if g.starting == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
	return err
}

// Stop stops every command of the Group that still runs and returns when all
// have exited, or when ctx ends. Each command that leads a process group of
// its own gets SIGTERM sent to that group, any other command to itself;
// those still running after [Group.KillAfter] (or halfway to ctx's deadline,
// if sooner) get SIGKILL the same way. On Windows, which has no SIGTERM,
// each command is killed at once (TerminateProcess), without the processes
// it started. A command has exited once it is a zombie on Linux (pidfd_open(2)),
// once cmd.Wait reaped it elsewhere.
//
// Stop also waits for Starts under way, and afterwards the Group starts
// nothing more. It returns nil when every command exited, or an error
// naming the ones still running that wraps ctx's error. A second Stop
// stops what the first could not.
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

	signalAll(ms, false)
	kill := g.killTimer(ctx)
	defer kill.Stop()
	if waitExit(ctx, ms, kill.C) {
		return g.pruned(nil)
	}
	signalAll(ms, true)
	if waitExit(ctx, ms, nil) {
		return g.pruned(nil)
	}
	return g.pruned(ctx.Err())
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

// pruned drops the members that exited and, if err is not nil, returns an
// error naming those still running.
func (g *Group) pruned(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = prune(g.members)
	if err == nil || len(g.members) == 0 {
		return nil
	}
	pids := make([]int, len(g.members))
	for i, m := range g.members {
		pids[i] = m.cmd.Process.Pid
	}
	return fmt.Errorf("qos: stop: %d commands still running after SIGKILL (pids %v): %w", len(pids), pids, err)
}

// prune returns ms without the members that exited, whose exit watches it
// closes.
func prune(ms []*member) []*member {
	live := ms[:0]
	for _, m := range ms {
		if m.exit.exited() {
			m.exit.close()
			continue
		}
		live = append(live, m)
	}
	clear(ms[len(live):])
	return live
}

func signalAll(ms []*member, kill bool) {
	for _, m := range ms {
		if !m.exit.exited() {
			m.signal(kill)
		}
	}
}

// exitPoll is how often Stop looks whether the commands have exited.
const exitPoll = 10 * time.Millisecond

// waitExit reports whether every member exited before ctx ended or until
// fired (nil: never).
func waitExit(ctx context.Context, ms []*member, until <-chan time.Time) bool {
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		all := true
		for _, m := range ms {
			all = all && m.exit.exited()
		}
		if all {
			return true
		}
		select {
		case <-tick.C:
		case <-until:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
