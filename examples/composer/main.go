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
// outside, or the terminal going away) runs a flush.Hook with a 2 s deadline
// and prints its report.
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
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/config"
	"github.com/offmain/offmain/examples/internal/quit"
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

// uiStuck is how long the UI loop may take to end after a signal before the
// signal's watcher runs the quit path itself.
const uiStuck = 500 * time.Millisecond

// errHangup ends a run whose terminal went away without a SIGHUP (see
// hangup).
var errHangup = errors.New("the terminal hung up")

// run runs the app and returns its exit status: 0, 2 for a bad command line,
// 1 when it could not run or its terminal went away (129 if SIGHUP came
// too), 128+n when signal n quit it.
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
	// SIGINT, SIGTERM and SIGHUP end the program, so the quit path (and its
	// flush) runs. Kill, not Quit: Program.Send (Quit) waits until the UI
	// loop takes the message, and a loop stuck in a write to a terminal that
	// stopped reading never does, which left the watcher stuck and every
	// later signal unheard. Past uiStuck the watcher runs the quit path.
	shutdown := sync.OnceValue(a.shutdown)
	w := quit.Watch(quit.Options{Name: "composer", Quit: func(os.Signal) { p.Kill() },
		Stuck: uiStuck, Flush: shutdown})
	_, runErr := p.Run()
	w.UIEnded()
	if a.hangup.gone.Load() && errors.Is(runErr, tea.ErrProgramKilled) {
		runErr = errHangup
	}
	return w.End(shutdown(), cfg.Dir, runErr)
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
