// Package stall finds the waits of a GUI's UI goroutine that nobody knew
// of: each time that goroutine waits longer than a budget, in a system
// call (a read of a slow file, an fsync) or blocked in Go (a mutex, a
// channel, a sync.Cond), the app gets a [Report] that says how long, in
// what, on which file where the OS can tell, and from where in its code.
// It runs in a normal run of the real app, and turns on with one call or
// with an environment variable.
//
// On the goroutine that runs the UI, before it enters the toolkit's loop:
//
//	stop, err := stall.Watch(stall.Options{}) // a 60 Hz frame's budget; reports to slog.Default()
//	if err != nil {
//		log.Print(err) // the app runs without it
//	}
//	defer stop()
//
// That goroutine is, for Fyne, the main goroutine, locked to the main
// thread, where ShowAndRun runs the driver's loop and every callback
// (fyne.io/fyne/v2 internal/driver/glfw/loop.go); for Gio, the goroutine
// that calls Window.Event and handles what it returns (gioui.org/app
// window.go); for Bubble Tea, the goroutine that calls Program.Run, on
// which Update and View run (github.com/charmbracelet/bubbletea tea.go).
// A report logged by default reads, on one line:
//
//	2026/12/04 09:28:17 WARN stall: the UI goroutine waited longer than its budget
//	  stall.duration=51.2ms stall.wait=syscall stall.syscall=read
//	  stall.path=/home/u/.config/app/state.json
//	  stall.site="example.com/app.loadState (/src/app/state.go:41)"
//	  stall.stack="example.com/app.loadState:41 < example.com/app.(*Menu).open:88"
//
// # What is reported
//
// A wait is reported when it lasts longer than [Options.Budget] and is
// not the goroutine's idle wait. What counts is time off the CPU because
// the goroutine asked to wait; time spent running, or runnable but
// waiting for a CPU on a loaded machine, is not a wait, so a frame busy
// computing is never reported, nor is a call that never blocks
// (clock_gettime, getpid) or a stop for the scheduler or the collector:
// one of those that took long was waiting for a CPU. A call that can
// block, though, counts whole, with the time its thread then waited for a
// CPU to come back (runtime/proc.go, exitsyscall). Calls into C through cgo are not reported
// either: the trace cannot tell a C function's wait from its work, and
// toolkits spend their frames in C (GLFW's event polling and buffer swap,
// Cocoa's run loop). Only the watched goroutine's waits count, and none
// inside this package's own functions.
//
// The idle wait is the toolkit's wait for the next event. Fyne's, Gio's
// and Bubble Tea's are recognised by the function that waits, the first
// frame of [Report.Stack]: (*gLDriver).runGL in Fyne v2,
// (*x11Window).dispatch, (*wlDisplay).dispatch and (*eventLoop).Event in
// Gio, (*Program).eventLoop in Bubble Tea v1. [Options.Idle] adds an
// app's own loop. An app that marks its frames or event handlers with
// [Frame] needs no names: once it has made a mark, every wait outside a
// frame is idle.
//
// Each report names its call site, the first frame outside the standard
// library: at most one report per call site per second is made, and the
// next one counts those left out ([Report.Dropped]). Reports arrive on a
// goroutine of the watcher's, within about two seconds of the wait's end,
// as the watcher reads the recording once a second. A wait still going
// on after a second is reported then, once, as [Report.Ongoing]: a
// goroutine that never comes back is reported while the app still runs.
// stop reports every wait that ended before it was called.
//
// # Turning it on without a rebuild
//
// Watch reads the variable OFFMAIN_STALL:
//
//	unset or empty   as Options say: watch, or not with Options.EnvOnly
//	1 or on          watch
//	0 or off         do not watch
//	budget=8ms       watch, with this budget (a time.ParseDuration above zero)
//
// Any other value makes Watch fail with an error that names it. A
// released app ships the call with EnvOnly set, and a user who sees the
// app stutter runs it with OFFMAIN_STALL=1: the reports go where the
// app's slog.Default() writes, stderr unless the app set a handler of
// its own, or to [Options.OnReport].
//
// # How, and what it costs
//
// Watch starts the runtime's flight recorder ([runtime/trace.FlightRecorder],
// Go 1.25; https://go.dev/blog/flight-recorder), which records every
// goroutine's system calls and blocks with their stacks, and reads a
// snapshot of it once a second with golang.org/x/exp/trace. On Linux a
// second goroutine reads, every half budget, which system call each
// thread of the process is in, from /proc/self/task/<tid>/syscall
// (proc_pid_syscall(5)), and the file of its descriptor or path argument
// while the call goes on: that is how a report gets its Path, also for a
// goroutine not locked to a thread. Both goroutines end at stop, and so
// does the recorder. With nothing watched, a [Frame] mark costs one atomic
// load and nothing runs. While watching, the UI goroutine pays for the
// trace's events (each system call, block and wake-up is recorded), and
// the process for reading them; DESIGN.md in this repository says how
// much, and how it was measured.
//
// runtime/trace allows one flight recorder at a time. If the app runs one,
// Watch returns [ErrRecorderInUse] and watches nothing; while stall
// watches, the app's FlightRecorder.Start fails. A trace started with
// [runtime/trace.Start] (go test -trace, net/http/pprof's
// /debug/pprof/trace) runs beside it, and shows the Frame marks as user
// logs in the category "offmain/stall".
//
// golang.org/x/exp/trace has no compatibility promise. This module pins
// its version, and its tests read real recordings of the Go they are
// built with; if a Go release makes traces it cannot read, the watcher
// logs one error to slog.Default() and reports nothing, and the app runs
// on unharmed.
//
// # Platforms
//
// Linux has all of it, for a normal user: /proc/self is readable by the
// process itself. On Windows, macOS and elsewhere the trace gives the
// same waits, durations, stacks and reasons, and [Report.Syscall] is
// named from the stack (the Win32 function on Windows: "ReadFile");
// [Report.Path] is always empty. This module's CI runs the tests as
// Windows binaries under Wine and links them for macOS; they do not run
// on macOS.
//
// # Why
//
// Other platforms have this for their main thread, in debug builds:
// Android's StrictMode (https://developer.android.com/reference/android/os/StrictMode.ThreadPolicy.Builder)
// flags disk reads and writes on the main thread, Chromium's
// ScopedBlockingCall (https://source.chromium.org/chromium/chromium/src/+/main:base/threading/scoped_blocking_call.h)
// asserts on blocking calls where they are disallowed, and Apple's Thread
// Performance Checker flags synchronous I/O on the main thread under the
// debugger. In production they count only long hangs (MetricKit's hang
// diagnostics start at a second). Go's GUI toolkits check which goroutine
// calls them, or nothing. None tells, in a normal run of the real app,
// that the UI goroutine waited 51 ms in read(2) on a state file, from
// here: the waits left in an app are the ones nobody has found yet, a
// config read in a menu handler, an os.Stat in a drag-and-drop callback,
// a lock a background pass holds across an fsync.
package stall
