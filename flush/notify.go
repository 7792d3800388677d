package flush

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
)

// defaultSignals are what a terminal, a service manager and a closing
// session send. On Windows, os/signal delivers CTRL_CLOSE_EVENT,
// CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT as SIGTERM (see the os/signal
// package documentation), so this set covers closing the console window.
var defaultSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Notify makes the listed signals (none listed: SIGINT, SIGTERM and SIGHUP)
// quit the process cleanly: on the first one it runs [Hook.Exit] (every
// saver, and every stopper: the app's agents, a toolkit's own quit that
// restores the terminal), writes the [Report] to [Options.Output], and
// exits with status 128+signal, the shell's convention for death by a
// signal (130 for SIGINT, 143 for SIGTERM).
//
// Only the same key pressed twice gives up on the disk: a second SIGINT
// after a SIGINT (Ctrl-C, Ctrl-C), or SIGQUIT after SIGQUIT, while the exit is
// under way exits at once with 128+that signal. Any other signal meanwhile
// is noted with the report and the exit runs to its end: a session's
// logout sends SIGTERM and then, at once, SIGHUP (systemd-logind's session
// scopes have SendSIGHUP=yes, see systemd.kill(5)), and a service manager
// may repeat SIGTERM.
//
// A signal that signal.Ignored reports ignored when Notify is called stays
// ignored: Notify does not catch it. os/signal's Notify would otherwise
// turn it back on, so that `nohup app &`, which starts the app with SIGHUP
// ignored, would quit when its terminal closes. That covers SIGHUP and
// SIGINT ignored when the process started (the Go runtime keeps an
// inherited SIG_IGN only for those two: sigInstallGoHandler and
// sigInitIgnored in runtime/signal_unix.go; os/signal's docs, "If the Go
// program is started with either SIGHUP or SIGINT ignored"), and any
// signal the app passed to signal.Ignore before Notify. A SIGTERM ignored
// at start is not: the runtime installs its own handler for it, Ignored
// reports false, and Notify catches it.
//
// A signal before Notify has its default effect (for these three: the
// process dies, nothing flushed); one after it runs only what was added to
// the Hook by then, so Add each store as soon as it exists (see the package
// documentation). Nothing after the exit runs: whatever must end first
// belongs in the Hook, with AddStop. An Exit the app calls itself while the
// signal's is under way (a toolkit that quits on the same signal) shares
// its run and report.
//
// Notify starts one goroutine that waits for the signals; stop unregisters
// them and ends it. If a signal already started the quit, stop waits for it,
// which means until the process exits. Call stop only once the app no longer
// wants signals to quit it; calling it more than once is harmless.
func (h *Hook) Notify(sig ...os.Signal) (stop func()) {
	if len(sig) == 0 {
		sig = defaultSignals
	}
	notify, unnotify, ignored := h.signalFuncs()
	var caught []os.Signal
	for _, s := range sig {
		if !ignored(s) {
			caught = append(caught, s)
		}
	}
	// Room for the first and a second signal: os/signal drops signals a
	// full channel cannot take.
	c := make(chan os.Signal, 2)
	if len(caught) > 0 { // signal.Notify with no signal would catch them all
		notify(c, caught...)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { h.watch(c, quit) })
	var once sync.Once
	return func() {
		once.Do(func() {
			if len(caught) > 0 {
				unnotify(c)
			}
			close(quit)
			wg.Wait()
		})
	}
}

// watch waits for the first signal, runs the hook's Exit, and exits. It
// owns the goroutine that runs it, which ends when Exit returns, by the
// deadline.
func (h *Hook) watch(c <-chan os.Signal, quit <-chan struct{}) {
	var first os.Signal
	select {
	case first = <-c:
	case <-quit:
		return
	}
	reports := make(chan Report, 1)
	var notes strings.Builder // the signals that came meanwhile
	go func() { reports <- h.Exit() }()
	exit := h.exitFunc()
	for {
		select {
		case r := <-reports:
			fmt.Fprint(h.output(), notes.String())
			fmt.Fprintln(h.output(), r.format(fmt.Sprintf("flush: %v: ", first)))
			exit(exitCode(first))
			return
		case again := <-c:
			if again != first || !interactive(again) {
				// Written with the report, once the stoppers have
				// returned: a terminal toolkit may still own the screen.
				fmt.Fprintf(&notes, "flush: %v while quitting on %v: went on to the end\n", again, first)
				continue
			}
			fmt.Fprintf(h.output(), "flush: %v: second signal, exiting without waiting for the disk\n", again)
			exit(exitCode(again))
			<-reports // reached only when exit returns (tests): let Exit finish
			return
		}
	}
}

// interactive reports whether sig comes from a key a person presses at a
// terminal (Ctrl-C, Ctrl-\), whose repeat means "now".
func interactive(sig os.Signal) bool {
	return sig == os.Interrupt || sig == syscall.SIGQUIT
}

// exitCode is the status a process that quits on sig should exit with:
// 128 plus the signal number, as shells report a death by signal
// (bash(1), "EXIT STATUS"), or 1 for a signal without a number.
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
