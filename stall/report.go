package stall

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"
)

// waitSyscall is [Report.Wait] for a wait in a system call.
const waitSyscall = "syscall"

// A Report is one wait of the watched goroutine that lasted longer than
// the budget.
type Report struct {
	// Start is when the wait began.
	Start time.Time

	// Duration is how long it lasted; if Ongoing, how long it had lasted
	// when reported.
	Duration time.Duration

	// Wait is what it waited in: "syscall" for a system call (see
	// Syscall), or, for a goroutine blocked in Go, the runtime's name for
	// the block: "sync" (a sync.Mutex or RWMutex), "sync.(*Cond).Wait",
	// "chan receive", "chan send", "select", "sleep", "network" (a file
	// or socket the runtime polls), and others (the list is
	// traceBlockReasonStrings in Go's runtime/traceruntime.go).
	Wait string

	// Syscall names the system call, as its manual page does ("read",
	// "fsync", "openat"; on Windows the Win32 function, "ReadFile"), for
	// a Wait of "syscall"; it is empty for a Go wait.
	Syscall string

	// Path is the file the system call concerned: the target of its file
	// descriptor, or the path it was given, as /proc showed it while the
	// call went on ("/home/u/.config/app/state.json", "pipe:[1234]"). It
	// is set only on Linux, and only when the call was seen in progress;
	// elsewhere it is empty.
	Path string

	// Stack is the goroutine's stack from the call site on, innermost
	// first: from the first frame outside the standard library and
	// golang.org/x/sys, the code that asked for the wait. Only PC,
	// Function, File and Line are set.
	Stack []runtime.Frame

	// Ongoing reports that the wait had not ended when reported: it went
	// on for a second, or past the budget when stop was called. The
	// wait is not reported again when it ends.
	Ongoing bool

	// Dropped counts the waits of the same call site left out since its
	// previous report, to keep to one report per call site per second.
	Dropped int
}

// String describes r on one line, then its stack one frame to a line as
// a Go traceback prints it.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stall: %v in %s", r.Duration.Round(10*time.Microsecond), r.what())
	if r.Ongoing {
		b.WriteString(", still waiting")
	}
	if r.Dropped > 0 {
		fmt.Fprintf(&b, " (%d more at this site not reported)", r.Dropped)
	}
	for _, f := range r.Stack {
		fmt.Fprintf(&b, "\n\t%s\n\t\t%s:%d", f.Function, f.File, f.Line)
	}
	return b.String()
}

// what says what r waited in: "read(2) on /a/b", "fsync(2)", "sync".
func (r Report) what() string {
	if r.Wait != waitSyscall {
		return r.Wait
	}
	s := r.Syscall
	if s == "" {
		s = "a system call"
	} else if !strings.ContainsAny(s[:1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		s += "(2)"
	}
	if r.Path != "" {
		s += " on " + r.Path
	}
	return s
}

// LogValue makes r a group of attributes for log/slog: duration, wait,
// syscall, path, site (the first frame), ongoing, dropped and stack, each
// left out when empty.
func (r Report) LogValue() slog.Value {
	as := []slog.Attr{slog.Duration("duration", r.Duration), slog.String("wait", r.Wait)}
	if r.Syscall != "" {
		as = append(as, slog.String("syscall", r.Syscall))
	}
	if r.Path != "" {
		as = append(as, slog.String("path", r.Path))
	}
	if len(r.Stack) > 0 {
		f := r.Stack[0]
		as = append(as, slog.String("site", fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line)))
	}
	if r.Ongoing {
		as = append(as, slog.Bool("ongoing", true))
	}
	if r.Dropped > 0 {
		as = append(as, slog.Int("dropped", r.Dropped))
	}
	if len(r.Stack) > 1 {
		fns := make([]string, len(r.Stack))
		for i, f := range r.Stack {
			fns[i] = fmt.Sprintf("%s:%d", f.Function, f.Line)
		}
		as = append(as, slog.String("stack", strings.Join(fns, " < ")))
	}
	return slog.GroupValue(as...)
}

// logReport is the OnReport of zero Options.
func logReport(r Report) {
	slog.Default().Warn("stall: the UI goroutine waited longer than its budget", "stall", r)
}
