// Command composer is a terminal chat app that embeds all of offmain: the
// app a user of the library would write, and the end-to-end measurement of
// what it buys.
//
// It has a list of chats, each with a transcript and a composer. Every
// keystroke in a composer goes to drafts.Store.Set and every settled scroll
// to anchors.Store.Set, so a restart brings back each chat's draft and
// scroll place. Each chat can run an agent (ctrl+g, or "/agent <command>"),
// started through qos.Start at the Agent tier with the mode from OFFMAIN_QOS;
// its output streams into the transcript and the status line shows the tier
// qos.Inspect reads back. Quitting (ctrl+c, or SIGINT, SIGTERM or SIGHUP from
// outside) runs a flush.Hook with a 2 s deadline and prints its report.
//
// With -sync-saves the app saves drafts and scroll places the way apps do
// today instead: a temp-file-and-rename write on the UI loop, per change.
// OFFMAIN_TYPING_PROBE=<file.csv> records, per key, when it passed each hop
// to the screen (see probe.go); typebench drives both modes under tmux and
// compares them.
//
// Usage:
//
//	go run . [-dir DIR] [-sync-saves] [-agents] [-agent CMD] [-chats a,b,c]
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"

	"github.com/offmain/offmain/flush"
)

func main() {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain())
	}
	os.Exit(run(os.Args[1:]))
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
	a, err := openApp(cfg, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "composer:", err)
		return 1
	}
	in, closeIn := terminalInput()
	defer closeIn()
	p := a.program(in, os.Stdout)
	stop := a.watchSignals()
	_, runErr := p.Run()
	rep := a.shutdown()
	sig := stop()
	fmt.Fprintln(os.Stderr, rep)
	fmt.Fprintln(os.Stderr, "composer: state in", cfg.dir)
	switch {
	case sig != nil:
		return flush.ExitCode(sig)
	case runErr != nil:
		fmt.Fprintln(os.Stderr, "composer:", runErr)
		return 1
	}
	return 0
}

// terminalInput returns the terminal to read keys from: stdin, or, when
// stdin is not a terminal, the controlling terminal (as bubbletea does for
// its default input).
func terminalInput() (*os.File, func()) {
	if term.IsTerminal(os.Stdin.Fd()) {
		return os.Stdin, func() {}
	}
	f, err := os.Open("/dev/tty")
	if err != nil {
		return os.Stdin, func() {}
	}
	return f, func() { _ = f.Close() }
}

// watchSignals makes SIGINT, SIGTERM and SIGHUP quit the program as ctrl+c
// does, so the quit path (and its flush) runs; a second one while quitting
// exits at once with 128+signal. The watching goroutine ends when stop is
// called; stop returns the signal that quit the app, or nil.
func (a *app) watchSignals() (stop func() os.Signal) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done, ended := make(chan struct{}), make(chan struct{})
	var first os.Signal // written by the goroutine, read after ended
	go func() {
		defer close(ended)
		for {
			select {
			case s := <-ch:
				if first == nil {
					first = s
					a.prog.Quit()
					continue
				}
				fmt.Fprintf(os.Stderr, "composer: %v again while quitting: exiting now\n", s)
				os.Exit(flush.ExitCode(s))
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
