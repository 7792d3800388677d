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
// outside, or the terminal going away) runs a flush.Hook's Exit with a 2 s
// deadline and prints its report once the terminal is restored.
//
// This is the wiring flush's documentation points to for a toolkit that
// owns the terminal: the program runs without bubbletea's own signal
// handler, the hook's Notify takes SIGINT, SIGTERM and SIGHUP, and the
// program's Kill is a stopper of the hook, so a signal's exit restores the
// terminal (the alternate screen left, cooked mode back) before Notify
// writes the report and exits.
//
// With -sync-saves the app saves drafts and scroll places the way apps do
// today instead: a temp-file-and-rename write on the UI loop, per change.
// OFFMAIN_TYPING_PROBE=<file.csv> records, per key, when it passed each hop
// to the screen (see probe.go); typebench drives both modes under tmux and
// compares them. OFFMAIN_STALL=1 logs each wait of the UI loop longer than
// a frame to composer.log in the state folder (see stall.go).
//
// Usage:
//
//	go run . [-dir DIR] [-sync-saves] [-agents] [-agent CMD] [-chats a,b,c]
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/config"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/qos"
)

func main() {
	// First thing: on Linux the agents' Group runs its helper processes (the
	// keeper and holder that end an agent's whole tree with the app) as this
	// binary re-executed; qos.Main returns at once in the app itself.
	qos.Main()
	if os.Getenv(workerEnv) == "1" {
		os.Exit(agent.StandIn("composer-agent-"))
	}
	os.Exit(run(os.Args[1:]))
}

// errHangup ends a run whose terminal went away without a SIGHUP (see
// hangup).
var errHangup = errors.New("the terminal hung up")

// run runs the app and returns its exit status: 0, 2 for a bad command line,
// 1 when it could not run or its terminal went away; a signal's exit ends
// the process with 128+signal inside the hook's Notify.
func run(args []string) int {
	cfg, err := config.Parse(args, os.Getenv, os.Stderr, config.Options{
		Name: "composer", Summary: "A terminal chat app that keeps drafts and scroll places with offmain.",
	})
	if config.IsHelp(err) {
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
	// The program is a stopper: a signal's exit asks it to quit, which
	// restores the terminal, and waits for Run to return before the report
	// is written. Quit waits until the UI loop takes the message, so it is
	// sent from a goroutine of its own: a loop stuck in a write to a
	// terminal that stopped reading never takes it, and the goroutine ends
	// with the program (Program.Send returns once the program's context
	// ends). Not Kill: it skips the wait for the input reader, which then
	// reads from a closed descriptor (bubbletea v1.3.10, shutdown).
	ended := make(chan struct{})
	a.state.Hook.AddStop("ui", flush.Func(func(ctx context.Context) error {
		go p.Quit()
		select {
		case <-ended:
			a.closeProbe()
			return nil
		case <-ctx.Done():
			return fmt.Errorf("the UI did not end: %w", ctx.Err())
		}
	}))
	stop := a.state.Hook.Notify()
	stopStall := watchStall(cfg.Dir)
	_, runErr := p.Run()
	close(ended)
	stopStall() // before the quit path's waits for the disk, which are not the UI's
	rep := a.shutdown()
	stop() // a signal's exit, if one is under way, ends the process here
	fmt.Fprintln(os.Stderr, rep)
	fmt.Fprintf(os.Stderr, "composer: state in %s\n", cfg.Dir)
	switch {
	case a.hangup.gone.Load() && errors.Is(runErr, tea.ErrProgramKilled):
		fmt.Fprintln(os.Stderr, "composer:", errHangup)
		return 1
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
