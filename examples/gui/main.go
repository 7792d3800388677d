package main

import (
	"fmt"
	"os"
	"time"

	gioapp "gioui.org/app"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/config"
	"github.com/offmain/offmain/examples/internal/quit"
	"github.com/offmain/offmain/qos"
	"github.com/offmain/offmain/stall"
)

// workerEnv, set to 1, makes the app binary run as the built-in agent
// (agent.StandIn) instead of the app: how the default agent re-executes the
// app; the tests' binary honours it too.
const workerEnv = "OFFMAIN_GUI_AGENT"

func main() {
	// First thing: on Linux the agents' Group runs its helper processes (the
	// keeper and holder that end an agent's whole tree with the app) as this
	// binary re-executed; qos.Main returns at once in the app itself.
	qos.Main()
	if os.Getenv(workerEnv) == "1" {
		os.Exit(agent.StandIn("offmain-gui-agent-"))
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
	cfg, err := config.Parse(args, os.Getenv, os.Stderr, config.Options{
		Name: "gui", Command: "offmain-gui",
		Summary: "A desktop chat app (Gio) that keeps drafts and scroll places with offmain.",
	})
	if config.IsHelp(err) {
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
	// SIGINT, SIGTERM and SIGHUP close the window as its close button does,
	// so the same quit path (and its flush) runs.
	sigs := quit.Watch(quit.Options{
		Name: "offmain-gui", Quit: func(s os.Signal) { a.inbox.post(quitMsg{sig: s}) },
		Stuck: stuckUI, Flush: a.state.Hook.Exit,
	})
	for _, c := range a.ui.chats {
		if cfg.Agents {
			a.ui.startAgent(c, "")
		}
	}
	// With OFFMAIN_STALL=1, stall reports each wait of this goroutine, the
	// one that calls Window.Event and so runs the UI, longer than a frame:
	// to stderr, through slog.Default. EnvOnly: nothing runs without it.
	stopStall, err := stall.Watch(stall.Options{EnvOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "offmain-gui:", err) // the app runs without it
	}
	winErr := a.loop(w)
	stopStall()
	sigs.UIEnded()
	a.ui.bg.Wait()
	return sigs.End(a.shutdown(), cfg.Dir, winErr)
}

// stuckUI is how long the signal watcher lets the UI goroutine take to close
// the window before it flushes and exits itself: a UI goroutine blocked (in
// a synchronous save on a disk that does not answer, say) must not keep the
// drafts from the disk.
const stuckUI = 3 * time.Second
