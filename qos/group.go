package qos

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
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
// double forks and daemons, and ends with the app. cmd.Process is then qos's
// keeper, which stands for the command (see the package documentation):
// cmd.Wait returns when the command exits, with its status, and
// [Inspect](cmd.Process.Pid) reads the command, whose own pid is
// [Applied.Pid]. A command with a Chroot, a Credential or CLONE_NEWPID in
// its SysProcAttr is not held, nor is any in an app without Main, and the
// Group says so through OnError: Stop then reaches the command's process
// group and the descendants it can still find, and a parent-death signal
// (SIGKILL, unless the command sets its own) ends the command itself with
// the app. On macOS and other Unix systems Stop signals the command's
// process group only (what left it is not reached), and it sees the
// command exit only once the caller's cmd.Wait has reaped it (kill(2) with
// signal 0 succeeds on a zombie). On Windows each command runs in a job
// object that ends its tree with the app or at Stop.
type Group struct {
	// Cgroup (Linux only) is a cgroup v2 directory delegated to this
	// process, with the cpu controller available: Start puts each lowered
	// command straight into a leaf under it (clone3 CLONE_INTO_CGROUP), a
	// leaf with cpu.idle 1 for SCHED_IDLE tiers and cpu.weight.nice set to
	// the tier's nice value otherwise, and within it a cgroup of the
	// command's own, which Stop and the app's end kill at once
	// (cgroup.kill). A cgroup's weight competes with the GUI's whatever
	// sessions the command's tree makes. Where the io controller reaches
	// Cgroup, the leaf also gets an io.max for each disk, the I/O lever
	// (see the package documentation). If the cgroup cannot be prepared,
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
	// its session's autogroup nice value), the I/O lever a tier's cgroup
	// could not be given (once for each run of the same failure, which
	// every later Start in that tier would meet again), and the notice
	// that this Group holds less than it would with [Main]. It may be
	// called from another goroutine, one call at a time; it must not block
	// for long, for the errors after it are delivered once it returns. It
	// may call the Group's methods: an error they report comes after. It
	// takes the same function as statefile's Options.OnError, so an app
	// shows both the same way. Nil: each error is logged to [slog.Default].
	OnError func(error)

	reportMu   sync.Mutex // protects reports and delivering
	reports    []error    // errors waiting for OnError
	delivering bool       // a report is calling OnError: one at a time
	mu         sync.Mutex // protects the fields below
	members    []member
	starting   int           // Starts under way
	idle       chan struct{} // closed when starting drops to 0, if Stop waits for it
	stopped    bool
	told       bool     // tellOnce has told
	sys        groupSys // what the platform's Group keeps
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

// report hands err to OnError, or logs it, one error at a time: Starts on
// several goroutines and the pacer's retries report concurrently. The
// errors queue, and whichever report finds no one delivering delivers
// them all, so a report from inside OnError (a Start it calls) queues
// and returns rather than waiting for the call it is in.
func (g *Group) report(err error) {
	g.reportMu.Lock()
	g.reports = append(g.reports, err)
	if g.delivering {
		g.reportMu.Unlock()
		return
	}
	g.delivering = true
	for len(g.reports) > 0 {
		err := g.reports[0]
		g.reports[0] = nil
		g.reports = g.reports[1:]
		g.reportMu.Unlock()
		if g.OnError != nil {
			g.OnError(err)
		} else {
			slog.Default().Warn("qos: error", slog.Any("err", err))
		}
		g.reportMu.Lock()
	}
	g.reports, g.delivering = nil, false
	g.reportMu.Unlock()
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
