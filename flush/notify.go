package flush

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// defaultSignals are what a terminal, a service manager and a closing
// session send. On Windows, os/signal delivers CTRL_CLOSE_EVENT,
// CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT as SIGTERM (see the os/signal
// package documentation), so this set covers closing the console window.
var defaultSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Notify makes the listed signals (none listed: SIGINT, SIGTERM and SIGHUP)
// quit the process cleanly: on the first one it runs [Hook.Run], writes the
// [Report] on one line to standard error, and exits with status 128+signal,
// the shell's convention for death by a signal (130 for SIGINT, 143 for
// SIGTERM). A second signal while Run is under way exits at once with
// 128+that signal: the user asked twice.
//
// A signal before Notify has its default effect (for these three: the
// process dies, nothing flushed); one after it runs only what was added to
// the Hook by then, so Add each store as soon as it exists (see the package
// documentation). Nothing after the exit runs: stopping the app's agents
// belongs in the Hook too, as flush.Func(group.Stop) for a qos.Group.
//
// Notify starts one goroutine that waits for the signals; stop unregisters
// them and ends it. If a signal already started the quit, stop waits for it,
// which means until the process exits. Call stop only once the app no longer
// wants signals to quit it; calling it more than once is harmless.
func (h *Hook) Notify(sig ...os.Signal) (stop func()) {
	if len(sig) == 0 {
		sig = defaultSignals
	}
	notify, unnotify := h.signalFuncs()
	// Room for the first and a second signal: os/signal drops signals a
	// full channel cannot take.
	c := make(chan os.Signal, 2)
	notify(c, sig...)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { h.watch(c, quit) })
	var once sync.Once
	return func() {
		once.Do(func() {
			unnotify(c)
			close(quit)
			wg.Wait()
		})
	}
}

// watch waits for the first signal, runs the hook, and exits. It owns the
// goroutine that runs the hook, which ends when Run returns, by the deadline.
func (h *Hook) watch(c <-chan os.Signal, quit <-chan struct{}) {
	var first os.Signal
	select {
	case first = <-c:
	case <-quit:
		return
	}
	reports := make(chan Report, 1)
	go func() { reports <- h.Run() }()
	exit := h.exitFunc()
	select {
	case r := <-reports:
		fmt.Fprintln(h.errOut(), r.format(fmt.Sprintf("flush: %v: ", first)))
		exit(ExitCode(first))
	case second := <-c:
		fmt.Fprintf(h.errOut(), "flush: %v: second signal, exiting without waiting for the disk\n", second)
		exit(ExitCode(second))
		<-reports // reached only when exit returns (tests): let Run finish
	}
}

// ExitCode is the status a process that quits on sig should exit with:
// 128 plus the signal number, as shells report a death by signal
// (bash(1), "EXIT STATUS"), or 1 for a signal without a number.
func ExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
