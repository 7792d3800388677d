package qos

import (
	"fmt"
	"os/exec"
	"strings"
)

// Tier says who a process or a pass of work serves. The declared policy for
// each tier is the table printed by [Describe].
type Tier int

const (
	// Serving is the daemon the GUI waits on: its CPU priority stays, its
	// disk I/O yields. See [EnterServing].
	Serving Tier = iota
	// Agent is an agent host and everything it starts. See [Group].
	Agent
	// Background is one housekeeping pass on one thread. See [Do].
	Background
)

// tierNames are the tiers as Describe names them.
var tierNames = [...]string{"Serving", "Agent", "Background"}

// Mode says how hard the tiers are applied. The zero Mode means [ModeUtility].
type Mode string

const (
	ModeUtility    Mode = "utility"    // yield, keep making progress (the default)
	ModeBackground Mode = "background" // run only on otherwise idle CPU and disk
	ModeOff        Mode = "off"        // apply nothing
)

// EnvVar is the environment variable that carries the mode: an app reads it
// (see [ResolveMode]) and passes EnvVar+"="+string(mode) on to the agents it
// starts, so that what they start resolves the same mode.
const EnvVar = "OFFMAIN_QOS"

// ResolveMode returns the mode of the first of values that is not empty,
// and its index in values. Pass the values in the app's resolve order, for
// example the OFFMAIN_QOS of the profile an agent runs in, then the app's
// own, then the app's configuration: the first that is set wins. With none
// set it returns [ModeUtility] and -1. If the winning value is not a mode,
// ResolveMode returns ModeUtility, that value's index and an error naming
// the value and the allowed ones: the caller decides whether to go on.
func ResolveMode(values ...string) (m Mode, from int, err error) {
	for i, v := range values {
		if v != "" {
			m, err := Mode(v).check()
			return m, i, err
		}
	}
	return ModeUtility, -1, nil
}

// check returns the normalised mode, or an error naming m and the allowed
// values.
func (m Mode) check() (Mode, error) {
	switch m {
	case "":
		return ModeUtility, nil
	case ModeUtility, ModeBackground, ModeOff:
		return m, nil
	}
	return ModeUtility, fmt.Errorf("qos: unknown mode %q: want one of utility, background, off", string(m))
}

func (t Tier) check() error {
	if t < Serving || t > Background {
		return fmt.Errorf("qos: unknown tier %d", int(t))
	}
	return nil
}

// args checks a call's tier and mode and returns the mode normalised.
func args(t Tier, m Mode) (Mode, error) {
	m, err := m.check()
	if err != nil {
		return m, err
	}
	return m, t.check()
}

// policy is the declared table: one row a tier, one column a platform.
// Describe prints it; the Linux column is checked against the settings the
// code applies by a test.
var policy = [...]struct{ who, linux, darwin, windows string }{
	{"the daemon the GUI waits on",
		"CPU unchanged and I/O best-effort 7, on every thread",
		"disk I/O at IOPOL_UTILITY, CPU unchanged",
		"unchanged"},
	{"agent hosts and all they start",
		"utility: nice +15 and I/O best-effort 7; background: SCHED_IDLE, nice +19 and I/O idle",
		"utility: taskpolicy -c utility -d utility (CPU clamped to utility, disk IOPOL_UTILITY); background: taskpolicy -b (PRIO_DARWIN_BG)",
		"utility: BELOW_NORMAL_PRIORITY_CLASS; background: IDLE_PRIORITY_CLASS"},
	{"one housekeeping pass on one thread",
		"that thread, for the pass: utility: nice +19 and I/O idle; background: SCHED_IDLE, nice +19 and I/O idle",
		"that thread at QOS_CLASS_BACKGROUND (run as DARWIN_BG) for the pass, its class restored after",
		"THREAD_MODE_BACKGROUND_BEGIN/END"},
}

// Describe returns the declared policy as a Markdown table, one row a tier
// and one column a platform, followed by a line on where the mode comes
// from.
func Describe() string {
	var b strings.Builder
	b.WriteString("| Tier | Who | Linux | macOS | Windows |\n|---|---|---|---|---|\n")
	for i, r := range policy {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", tierNames[i], r.who, r.linux, r.darwin, r.windows)
	}
	b.WriteString("Mode: " + EnvVar + "=utility|background|off (empty or unset: utility); off applies nothing.\n")
	return b.String()
}

// Start starts cmd, as [exec.Cmd.Start] does, so that the command and every
// thread and process it creates run in tier t under mode m. It neither
// holds nor ends what cmd starts: an app uses it for a command it waits for
// itself and that leaves nothing behind (a formatter, git status at the
// Background tier), which a [Group] would give two helper processes; an
// agent host goes through a Group.
//
// On Linux the command is forked from a fresh OS thread lowered to the tier,
// which the Go runtime then retires (no thread the app keeps is lowered),
// and in mode background it is at SCHED_IDLE before its first instruction.
// A command in a new session (SysProcAttr.Setsid) gets its autogroup's nice
// value set to the tier's; where the kernel's rate limit defers that write,
// Start does not wait for it, and a write that fails in the end is logged
// to [slog.Default] (a Group's go to its OnError) and shows in [Inspect].
// SysProcAttr.Pdeathsig keeps its meaning, "the app died" (the command is
// forked from a thread kept while it runs); SysProcAttr.Ptrace is refused
// unless the mode is off. On macOS the command runs under
// /usr/sbin/taskpolicy; on Windows its priority class is set through
// SysProcAttr.CreationFlags. Whatever Start changes in SysProcAttr it
// changes in a copy: cmd.SysProcAttr is the caller's again when it returns.
//
// Mode off is cmd.Start. An empty Mode means [ModeUtility]. Start returns
// an error only when the command did not start; once it started, the caller
// owns a running command and must Wait for it. Start waits until the
// command has exec'd, so call it off the UI goroutine. It is safe for
// concurrent use; it must not be called twice on one cmd.
func Start(cmd *exec.Cmd, t Tier, m Mode) error {
	m, err := args(t, m)
	if err != nil {
		return err
	}
	return start(cmd, t, m)
}

// Do runs fn on one OS thread lowered to tier t under mode m and returns when
// fn returns: an app's housekeeping pass (an index compaction, a cache
// sweep) that no child process does. On Linux the thread is a fresh one that
// the Go runtime retires after fn (a nice value cannot be raised back
// without privilege), so no thread of the process stays lowered; on macOS
// and Windows the thread is put back. Goroutines that fn starts run on
// other, unlowered threads. A panic in fn is raised again in the caller of
// Do. Mode off runs fn on the calling goroutine. Do returns an error,
// without running fn, only if the thread could not be lowered. Do is safe
// for concurrent use.
//
// fn must not hold a lock that interactive work also takes (a mutex, a file
// lock, a database transaction): the GUI would wait behind a thread that
// now runs at the lowest priority, a priority inversion the tier itself
// creates. Copy what the pass needs under the lock, release it, then Do the
// slow part (see the example).
func Do(t Tier, m Mode, fn func()) error {
	m, err := args(t, m)
	if err != nil {
		return err
	}
	return do(t, m, fn)
}

// EnterServing applies the Serving tier to the calling process, as a daemon
// the GUI waits on does once at start, a daemon no Group starts: on Linux,
// I/O best-effort level 7 on every thread (threads created later copy it),
// with the CPU priority unchanged; on macOS, disk I/O policy IOPOL_UTILITY
// for the process; on Windows, nothing. Mode off applies nothing.
func EnterServing(m Mode) error {
	m, err := m.check()
	if err != nil || m == ModeOff {
		return err
	}
	return enterServing()
}
