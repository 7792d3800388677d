package main

import (
	"os"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/chatstate"
	"github.com/offmain/offmain/examples/internal/config"
	"github.com/offmain/offmain/flush"
)

// noteMsg is a line for the status bar, posted from any goroutine.
type noteMsg string

// app is the window's state on disk, its agents, and the quit path that
// flushes it all.
type app struct {
	cfg    config.Config
	state  *chatstate.State
	agents *agent.Set
	inbox  *inbox
	probe  *probe // nil: off
	ui     *ui
}

// openApp opens the state under cfg.Dir and reads what the last run left.
func openApp(cfg config.Config) (*app, error) {
	a := &app{cfg: cfg, inbox: &inbox{}}
	var err error
	a.state, err = chatstate.Open(cfg.Dir, chatstate.Options{
		Chats: cfg.Chats, SyncSaves: cfg.SyncSaves,
		// Called on a writer goroutine: post, never touch the UI from here.
		OnError: func(err error) { a.inbox.post(noteMsg(chatstate.Note("save failed", err))) },
		// statefile retries a failed write; this says it landed.
		OnRecovered: func(path string) { a.inbox.post(noteMsg(chatstate.Saved(path))) },
	})
	if err != nil {
		return nil, err
	}
	var notes []string
	if cfg.ModeErr != nil {
		notes = append(notes, cfg.ModeErr.Error())
	}
	notes = append(notes, a.state.Notes...)
	a.agents = agent.New(agent.Options{
		Mode: cfg.Mode, Command: cfg.AgentCmd, Send: a.inbox.post,
		StandInEnv: workerEnv, HideEnv: []string{config.ProbeEnv},
	})
	a.state.Hook.AddStop("agents", flush.Func(a.agents.StopAll)) // at exit only
	if cfg.ProbePath != "" {
		a.probe = &probe{path: cfg.ProbePath}
	}
	a.ui = a.newUI()
	if len(notes) > 0 {
		a.ui.note = notes[len(notes)-1]
	}
	return a, nil
}

// shutdown is the quit path once the window is gone: the hook's Exit stops
// the agents while it drains every store under its 2 s deadline, then the
// stores close and the probe writes its file.
func (a *app) shutdown() flush.Report {
	rep := a.state.Hook.Exit()
	a.state.Close()
	if err := a.probe.write(); err != nil {
		os.Stderr.WriteString("offmain-gui: typing probe: " + err.Error() + "\n")
	}
	return rep
}
