package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	gioapp "gioui.org/app"

	"github.com/offmain/offmain/flush"
)

func main() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain())
	}
	// Gio's pattern: the window runs on a goroutine of its own and the main
	// goroutine is handed to app.Main, which some platforms (macOS) need for
	// their event loop and which never returns. This goroutine ends the
	// process.
	go func() { os.Exit(run(os.Args[1:])) }()
	gioapp.Main()
}

// run runs the app and returns its exit status: 0, 2 for a bad command line,
// 1 when it could not run, 128+n when signal n quit it.
func run(args []string) int {
	cfg, err := parseConfig(args, os.Getenv, os.Stderr)
	if isHelp(err) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	a, err := openApp(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "offmain-gui:", err)
		return 1
	}
	w := a.newWindow()
	gone := make(chan struct{})
	stop := a.watchSignals(gone)
	for _, c := range a.ui.chats {
		if cfg.agents {
			a.ui.startAgent(c, "")
		}
	}
	winErr := a.loop(w)
	close(gone)
	a.ui.bg.Wait()
	rep := a.shutdown()
	sig := stop()
	fmt.Fprintln(os.Stderr, rep)
	fmt.Fprintln(os.Stderr, "offmain-gui: state in", cfg.dir)
	switch {
	case sig != nil:
		return flush.ExitCode(sig)
	case winErr != nil:
		fmt.Fprintln(os.Stderr, "offmain-gui:", winErr)
		return 1
	}
	return 0
}

// stuckUI is how long the signal watcher lets the UI goroutine take to close
// the window before it flushes and exits itself: a UI goroutine blocked (in
// a synchronous save on a disk that does not answer, say) must not keep the
// drafts from the disk.
const stuckUI = 3 * time.Second

// watchSignals makes SIGINT, SIGTERM and SIGHUP close the window as its close
// button does, so the same quit path (and its flush) runs; a second one
// while quitting exits at once with 128+signal. The watching goroutine ends
// when stop is called; stop returns the signal that quit the app, or nil.
// gone is closed once the window is: from then on the quit path runs, and
// the watcher no longer takes it over.
func (a *app) watchSignals(gone <-chan struct{}) (stop func() os.Signal) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done, ended := make(chan struct{}), make(chan struct{})
	var first os.Signal // written by the goroutine, read after ended
	go func() {
		defer close(ended)
		stuck := time.NewTimer(time.Hour)
		stuck.Stop()
		defer stuck.Stop()
		for {
			select {
			case s := <-ch:
				if first == nil {
					first = s
					a.inbox.post(quitMsg{sig: s})
					stuck.Reset(stuckUI)
					continue
				}
				fmt.Fprintf(os.Stderr, "offmain-gui: %v again while quitting: exiting now\n", s)
				os.Exit(flush.ExitCode(s))
			case <-gone:
				stuck.Stop()
				gone = nil
			case <-stuck.C:
				fmt.Fprintf(os.Stderr, "offmain-gui: the window did not close within %v: flushing from here\n", stuckUI)
				fmt.Fprintln(os.Stderr, a.hook.Run())
				os.Exit(flush.ExitCode(first))
			case <-done:
				return
			}
		}
	}()
	return func() os.Signal {
		signal.Stop(ch)
		close(done)
		<-ended
		return first
	}
}
