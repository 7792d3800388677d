package main

import (
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/examples/internal/chatstate"
	"github.com/offmain/offmain/examples/internal/config"
	"github.com/offmain/offmain/flush"
)

// app is the composer: its state on disk, its agents, its model, and the
// quit path that flushes it all.
type app struct {
	cfg    config.Config
	state  *chatstate.State
	agents *agent.Set
	probe  *probeRef
	model  *model
	notes  *noteBox

	prog   *tea.Program // set by program; agents send to it
	hangup *hangup      // set by program: whether the terminal went away
}

// openApp opens the state under cfg.Dir, reads what the last run left, and
// builds the model. send, if not nil, replaces the program as the receiver
// of agents' messages (tests without a program).
func openApp(cfg config.Config, send func(tea.Msg)) (*app, error) {
	a := &app{cfg: cfg, probe: &probeRef{}, notes: &noteBox{}}
	var err error
	a.state, err = chatstate.Open(cfg.Dir, chatstate.Options{
		Chats: cfg.Chats, SyncSaves: cfg.SyncSaves,
		OnError:     func(err error) { a.notes.set(chatstate.Note("save failed", err)) },
		OnRecovered: func(path string) { a.notes.set(chatstate.Saved(path)) },
	})
	if err != nil {
		return nil, err
	}
	var notes []string
	if cfg.ModeErr != nil {
		notes = append(notes, cfg.ModeErr.Error())
	}
	notes = append(notes, a.state.Notes...)
	if send == nil {
		send = func(msg tea.Msg) { a.prog.Send(msg) }
	}
	a.agents = newAgentSet(cfg, send)
	a.state.Hook.AddStop("agents", flush.Func(a.agents.StopAll)) // at exit only: a quit the person cancels keeps them
	if cfg.ProbePath != "" {
		p, err := openProbe(cfg.ProbePath)
		if err != nil {
			notes = append(notes, err.Error())
		} else {
			a.probe.p.Store(p)
		}
	}
	a.model = a.newModel()
	if len(notes) > 0 {
		a.notes.set(notes[len(notes)-1])
	}
	return a, nil
}

func (a *app) newModel() *model {
	m := &model{
		saves: a.state.Saves, trans: a.state.Transcripts, agents: a.agents, probe: a.probe,
		mode: a.cfg.Mode, notes: a.notes, startAgents: a.cfg.Agents,
		tiers: map[string]string{},
	}
	for _, id := range a.cfg.Chats {
		place, ok := a.state.Saves.Anchor(id)
		m.chats = append(m.chats, newChat(id, a.state.Transcripts.Loaded(id), a.state.Saves.Draft(id), place, ok))
	}
	return m
}

// program returns the bubbletea program over in and out, wrapped for the
// typing probe. Signals are the app's (the hook's Notify in run), not
// bubbletea's.
func (a *app) program(in io.Reader, out io.Writer) *tea.Program {
	a.hangup = &hangup{}
	a.prog = tea.NewProgram(a.model,
		tea.WithAltScreen(),
		tea.WithMouseCellMotion(),
		tea.WithoutSignalHandler(),
		tea.WithInput(probeInput(in, a.probe, a.hangup)),
		tea.WithOutput(probeOutput(out, a.probe, a.hangup)),
	)
	a.hangup.end = a.prog.Kill
	return a.prog
}

// shutdown is the quit path once the program has ended: the hook's Exit
// stops the agents while it drains every store under its 2 s deadline (an
// Exit a signal started is joined), then the stores and the probe close.
// It returns the hook's report.
func (a *app) shutdown() flush.Report {
	rep := a.state.Hook.Exit()
	a.state.Close()
	a.closeProbe()
	return rep
}

// closeProbe writes and closes the typing probe's file, if any.
func (a *app) closeProbe() {
	if p := a.probe.p.Swap(nil); p != nil {
		if err := p.close(); err != nil {
			fmt.Fprintln(os.Stderr, "composer:", err)
		}
	}
}
