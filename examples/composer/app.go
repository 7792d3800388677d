package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// quitTimeout is the flush hook's deadline at quit (2 s).
const quitTimeout = 2 * time.Second

// app is the composer: its state on disk, its agents, its model, and the
// quit path that flushes it all.
type app struct {
	cfg    config
	st     *statefile.Store
	saves  saver
	trans  *transcripts
	agents *agentSet
	probe  *probeRef
	hook   *flush.Hook
	model  *model
	notes  *noteBox

	prog *tea.Program // set by program; agents send to it
}

// openApp opens the state under cfg.dir, reads what the last run left, and
// builds the model. send, if not nil, replaces the program as the receiver
// of agents' messages (tests without a program).
func openApp(cfg config, send func(tea.Msg)) (*app, error) {
	if err := os.MkdirAll(cfg.dir, 0o700); err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, probe: &probeRef{}, notes: &noteBox{}, hook: flush.New(quitTimeout)}
	a.st = statefile.NewStore(statefile.Options{
		OnError: func(path string, err error) { a.notes.set(describeErr("save failed", err)) },
	})
	var notes []string
	if cfg.modeErr != nil {
		notes = append(notes, cfg.modeErr.Error())
	}
	var err error
	if cfg.syncSaves {
		a.saves, err = openSync(cfg.dir, &notes)
	} else {
		a.saves, err = openOffmain(a.st, cfg.dir, &notes)
	}
	if err != nil {
		return nil, errors.Join(err, a.closeStore())
	}
	a.trans, err = openTranscripts(a.st, cfg.dir, cfg.chats, &notes)
	if err != nil {
		return nil, errors.Join(err, a.saves.close(context.Background()), a.closeStore())
	}
	a.saves.register(a.hook)
	a.hook.Add("transcripts", a.st)
	if send == nil {
		send = func(msg tea.Msg) { a.prog.Send(msg) }
	}
	a.agents = newAgentSet(cfg.mode, cfg.agentCmd, send)
	if cfg.probePath != "" {
		p, err := openProbe(cfg.probePath)
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
		saves: a.saves, trans: a.trans, agents: a.agents, probe: a.probe,
		mode: a.cfg.mode, notes: a.notes, startAgents: a.cfg.agents,
		tiers: map[string]string{},
	}
	for _, id := range a.cfg.chats {
		place, ok := a.saves.anchor(id)
		m.chats = append(m.chats, newChat(id, a.trans.loadedFor(id), a.saves.draft(id), place, ok))
	}
	return m
}

// program returns the bubbletea program over in and out, wrapped for the
// typing probe. Signals are the app's (see notifySignals), not bubbletea's.
func (a *app) program(in io.Reader, out io.Writer) *tea.Program {
	a.prog = tea.NewProgram(a.model,
		tea.WithAltScreen(),
		tea.WithMouseCellMotion(),
		tea.WithoutSignalHandler(),
		tea.WithInput(probeInput(in, a.probe)),
		tea.WithOutput(probeOutput(out, a.probe)),
	)
	return a.prog
}

// shutdown is the quit path after the program has ended: agents are told to
// stop while the flush hook drains every store under its 2 s deadline, then
// the stores and the probe close. It returns the hook's report.
func (a *app) shutdown() flush.Report {
	var wg sync.WaitGroup
	wg.Go(a.agents.stopAll)
	rep := a.hook.Run()
	wg.Wait()
	// Everything drained, or the report says what did not: closing only
	// stops timers and writers, with little time left to wait.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = a.saves.close(ctx)
	_ = a.st.Close(ctx)
	if p := a.probe.p.Swap(nil); p != nil {
		if err := p.close(); err != nil {
			fmt.Fprintln(os.Stderr, "composer:", err)
		}
	}
	return rep
}

// closeStore closes the statefile store after a failed open.
func (a *app) closeStore() error {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return a.st.Close(ctx)
}
