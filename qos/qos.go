package qos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/offmain/offmain/internal/oneline"
)

// Tier says who a process or a pass of work serves. The declared policy for
// each tier is the table printed by [Describe].
type Tier int

const (
	// Serving is the daemon the GUI waits on: its CPU priority stays, its
	// disk I/O yields.
	Serving Tier = iota
	// Agent is an agent host and everything it starts.
	Agent
	// Background is one housekeeping pass on one thread.
	Background
)

func (t Tier) String() string {
	switch t {
	case Serving:
		return "Serving"
	case Agent:
		return "Agent"
	case Background:
		return "Background"
	}
	return fmt.Sprintf("Tier(%d)", int(t))
}

// Mode says how hard the tiers are applied. The zero Mode means [ModeUtility].
type Mode string

const (
	ModeUtility    Mode = "utility"    // yield, keep making progress (the default)
	ModeBackground Mode = "background" // run only on otherwise idle CPU and disk
	ModeOff        Mode = "off"        // apply nothing
)

// EnvVar is the environment variable that carries the mode.
const EnvVar = "OFFMAIN_QOS"

var (
	// ErrMode is wrapped by every error about a mode that is not one of
	// utility, background and off.
	ErrMode = errors.New("qos: unknown mode")
	// ErrTier is wrapped by errors about a Tier other than the three declared.
	ErrTier = errors.New("qos: unknown tier")
	// ErrThreadBound is returned (wrapped) by Start on Linux, in a mode
	// other than off, and by Group.Start on Linux for a command whose
	// SysProcAttr sets Ptrace: the tracer is the thread that starts the
	// child (ptrace(2)), and Start retires that thread as soon as the child
	// runs, which would leave the child without a tracer. (Pdeathsig, tied
	// to the starting thread too, is honoured: see [Options.Start].)
	ErrThreadBound = errors.New("qos: SysProcAttr.Ptrace is tied to the starting thread, which Start retires")
)

const allowedModes = "want one of utility, background, off"

// check returns the normalised mode, or an error wrapping [ErrMode] that
// names origin and the allowed values.
func (m Mode) check(origin string) (Mode, error) {
	switch m {
	case "":
		return ModeUtility, nil
	case ModeUtility, ModeBackground, ModeOff:
		return m, nil
	}
	return ModeUtility, fmt.Errorf("%w %q in %s: %s", ErrMode, string(m), origin, allowedModes)
}

func (t Tier) check() error {
	if t < Serving || t > Background {
		return fmt.Errorf("%w %d", ErrTier, int(t))
	}
	return nil
}

// A Source is one place that may set the mode: a profile's environment, the
// daemon's environment, a configuration value. An empty Value sets nothing.
type Source struct {
	Origin string // names the place in errors, e.g. "OFFMAIN_QOS in profile work"
	Value  string // the mode as written there; "" sets nothing
}

// EnvSource returns the Source for [EnvVar] in environ, a list of
// "KEY=value" strings such as [os.Environ] or a profile's saved environment.
// As in [exec.Cmd.Env], the last entry for the variable counts.
func EnvSource(origin string, environ []string) Source {
	s := Source{Origin: EnvVar + " in " + origin}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvVar+"="); ok {
			s.Value = v
		}
	}
	return s
}

// Resolve returns the mode of the first source that sets one (a non-empty
// Value), or [ModeUtility] if none does. If that first value is not a mode,
// Resolve returns [ModeUtility] and an error wrapping [ErrMode] that names
// the source and the allowed values: the caller decides whether to fall back.
func Resolve(sources ...Source) (Mode, error) {
	for _, s := range sources {
		if s.Value != "" {
			return Mode(s.Value).check(s.Origin)
		}
	}
	return ModeUtility, nil
}

// ModeFromEnv reads [EnvVar] from this process's environment. Unset or empty
// means [ModeUtility]; any other value than utility, background and off
// yields ModeUtility and an error naming the variable and the allowed values.
func ModeFromEnv() (Mode, error) {
	return Resolve(Source{Origin: EnvVar + " in the environment", Value: os.Getenv(EnvVar)})
}

// Env returns "OFFMAIN_QOS=<m>", for a caller that rebuilds a child's
// environment from an allowlist, so the child (and the agents it starts)
// resolve the same mode. The zero Mode is written as utility.
func Env(m Mode) string {
	if m == "" {
		m = ModeUtility
	}
	return EnvVar + "=" + string(m)
}

// policy is the declared table: one row a tier, one column a platform.
// Describe prints it; the Linux column is checked against the settings the
// code applies (TestDescribeMatchesLinuxSettings).
var policy = [...]struct{ tier, who, linux, darwin, windows string }{
	{"Serving", "the daemon the GUI waits on",
		"CPU unchanged and I/O best-effort 7, on every thread",
		"disk I/O at IOPOL_UTILITY, CPU unchanged",
		"unchanged"},
	{"Agent", "agent hosts and all they start",
		"utility: nice +15 and I/O best-effort 7; background: SCHED_IDLE, nice +19 and I/O idle",
		"utility: taskpolicy -c utility -d utility (CPU clamped to utility, disk IOPOL_UTILITY); background: taskpolicy -b (PRIO_DARWIN_BG)",
		"utility: BELOW_NORMAL_PRIORITY_CLASS; background: IDLE_PRIORITY_CLASS"},
	{"Background", "one housekeeping pass on one thread",
		"that thread, for the pass: utility: nice +19 and I/O idle; background: SCHED_IDLE, nice +19 and I/O idle",
		"that thread at QOS_CLASS_BACKGROUND (run as DARWIN_BG) for the pass, its class restored after",
		"THREAD_MODE_BACKGROUND_BEGIN/END"},
}

// Describe returns the declared policy as a Markdown table, followed by a
// line on where the mode comes from.
func Describe() string {
	var b strings.Builder
	b.WriteString("| Tier | Who | Linux | macOS | Windows |\n|---|---|---|---|---|\n")
	for _, r := range policy {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.tier, r.who, r.linux, r.darwin, r.windows)
	}
	b.WriteString("Mode: " + EnvVar + "=utility|background|off (empty or unset: utility); off applies nothing.\n")
	return b.String()
}

// Start starts cmd so that it, and every thread and process it creates, runs
// in tier t as mode m sets it. It is [Options.Start] with the zero Options.
// To have what cmd starts end with the app as well, start it through a
// [Group].
func Start(cmd *exec.Cmd, t Tier, m Mode) error { return Options{}.Start(cmd, t, m) }

// Do runs fn on one OS thread lowered to tier t for the call, and leaves no
// thread of the process lowered afterwards. fn must not hold a lock that
// interactive work takes (see [Options.Do]). It is [Options.Do] with the
// zero Options.
func Do(t Tier, m Mode, fn func()) error { return Options{}.Do(t, m, fn) }

// EnterServing applies the Serving tier to the calling process: on Linux,
// disk I/O best-effort level 7 on every current thread (threads made later
// inherit it); the CPU priority stays. Mode off applies nothing. It is
// [Options.EnterServing] with the zero Options.
func EnterServing(m Mode) error { return Options{}.EnterServing(m) }

// WaitApplied returns once every step that [Start] queued after its
// children started (on Linux: moves to SCHED_IDLE, autogroup nice values)
// has run or failed, or with ctx's error. Start never waits for them; an app
// may, before it measures, and a test may, before goleak looks for the
// goroutine that applies them. Elsewhere it returns nil at once.
func WaitApplied(ctx context.Context) error { return waitApplied(ctx) }

// RootAutogroup is the name Inspect reports for the kernel's default
// autogroup: the one every process belongs to until it or an ancestor calls
// setsid(2) (init, kernel helpers, and processes a container runtime or a
// test runner started without a new session). The kernel prints nothing for
// it in /proc/<pid>/autogroup (kernel/sched/autogroup.c,
// proc_sched_autogroup_show_task skips a group that is not an autogroup, and
// the default one is the root task group), and its nice value cannot be
// changed (the root task group has no shares to set), so it is always 0.
const RootAutogroup = "/"

// Applied is what [Inspect] reads back about a process (its main thread)
// and, on Linux, the tree of processes below it. Fields a platform cannot
// report stay zero.
type Applied struct {
	Nice          int    // nice value (Linux: /proc/<pid>/stat field 19)
	Policy        string // Linux: "SCHED_OTHER", "SCHED_IDLE", ...; macOS, for the calling process only: "PRIO_DARWIN_BG" or "default"; Windows: the priority class
	IOClass       string // Linux: "none", "realtime", "best-effort" or "idle" (ioprio_get(2))
	IOLevel       int    // Linux: 0 (highest) to 7 within IOClass
	Autogroup     string // Linux: the autogroup, e.g. "/autogroup-42", or RootAutogroup; "" without CONFIG_SCHED_AUTOGROUP
	AutogroupNice int    // Linux: the autogroup's nice value (/proc/<pid>/autogroup)
	// AppAutogroup (Linux) is true when the process shares the calling
	// process's autogroup: a child not in a new session. Its Nice then
	// weighs against the app's threads within that group, whatever
	// AutogroupNice says (the app's own group, usually at 0).
	AppAutogroup bool
	IOScheduler  string // Linux: each disk's I/O scheduler and what it honours of IOClass and IOLevel

	// Pending lists the steps Start queued for this process after it started
	// that have not run yet (Linux: "SCHED_IDLE, nice 19", "autogroup nice
	// 5"); nil when none.
	Pending []string
	// Failed is the error of such a step that failed for this process
	// (errors.As finds a [*StepError]); nil when none failed. A failure is
	// kept while the process runs.
	Failed error

	// Processes and Threads count the process's tree (Linux): the process
	// and every live process below it, and their threads, as /proc lists
	// them. For the command of a [Group] in an app that calls [Main], the
	// fields above are the command's and the tree is everything it
	// started, without qos's own two helper processes.
	Processes, Threads int
	// OffTier names each process or thread of the tree that runs above the
	// tree's root (Linux): a lower nice value, SCHED_OTHER below a
	// SCHED_IDLE root, an I/O priority served first, or an autogroup of its
	// own (a session it made) at a lower nice value than the root's, e.g.
	// "pid 4242 (node): own autogroup /autogroup-97 at nice 0". At most 16,
	// then "and N more"; nil when none does.
	OffTier []string
}

// String words a as a status on one line, e.g. "nice 15, SCHED_OTHER, I/O
// best-effort 7, in the app's autogroup /autogroup-41" (a child in the
// app's session: its nice value weighs against the app's threads there, as
// intended) or "..., own autogroup /autogroup-42 at nice 15" (a child in a
// session of its own), then the tree when it has more than the process
// ("; tree: 4 processes, 9 threads") and what runs above the tier. It
// leaves IOScheduler out: that describes the disks, not the process.
func (a Applied) String() string {
	parts := []string{fmt.Sprintf("nice %d", a.Nice)}
	if a.Policy != "" {
		parts = append(parts, a.Policy)
	}
	if a.IOClass != "" {
		parts = append(parts, fmt.Sprintf("I/O %s %d", a.IOClass, a.IOLevel))
	}
	switch {
	case a.Autogroup == "":
	case a.AppAutogroup:
		parts = append(parts, "in the app's autogroup "+a.Autogroup)
	default:
		parts = append(parts, fmt.Sprintf("own autogroup %s at nice %d", a.Autogroup, a.AutogroupNice))
	}
	s := strings.Join(parts, ", ")
	if a.Processes > 1 {
		s += fmt.Sprintf("; tree: %d processes, %d threads", a.Processes, a.Threads)
	}
	if len(a.OffTier) > 0 {
		s += "; above the tier: " + strings.Join(a.OffTier, ", ")
	}
	if len(a.Pending) > 0 {
		s += "; pending: " + strings.Join(a.Pending, ", ")
	}
	if a.Failed != nil {
		s += "; failed: " + oneline.Fold(a.Failed.Error())
	}
	return s
}

// A StepError is the failure of a step that Start applies after the child
// started (Linux: the move to SCHED_IDLE, an autogroup's nice value). The
// child kept running; it runs without that step. [Options.OnError] gets it,
// and [Applied.Failed] holds it.
type StepError struct {
	Pid  int    // the child's process id
	Step string // e.g. "autogroup nice 15"
	Err  error  // what failed, e.g. wrapping syscall.EPERM or syscall.EAGAIN
}

func (e *StepError) Error() string {
	return fmt.Sprintf("qos: pid %d: %s: %v", e.Pid, e.Step, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// Inspect reads back the priorities process pid runs with: on Linux its nice
// value, scheduling policy, I/O class and level, autogroup, the note on the
// disks' I/O schedulers, and its tree of processes, with any that runs
// above it; on macOS the nice value and, for the calling
// process only (xnu answers for no other), whether it is in PRIO_DARWIN_BG;
// on Windows the priority class. Elsewhere it returns an error wrapping
// [errors.ErrUnsupported].
func Inspect(pid int) (Applied, error) { return inspect(pid) }
