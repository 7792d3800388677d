package main

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// quitTimeout is the flush hook's deadline at quit (2 s), as in the composer.
const quitTimeout = 2 * time.Second

// noteMsg is a line for the status bar, posted from any goroutine.
type noteMsg string

// app is the window's state on disk, its agents, and the quit path that
// flushes it all.
type app struct {
	cfg    config
	st     *statefile.Store
	saves  saver
	trans  *transcripts
	agents *agentSet
	hook   *flush.Hook
	inbox  *inbox
	probe  *probe // nil: off
	ui     *ui
}

// openApp opens the state under cfg.dir and reads what the last run left.
func openApp(cfg config) (*app, error) {
	if err := os.MkdirAll(cfg.dir, 0o700); err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, inbox: &inbox{}, hook: flush.New(quitTimeout)}
	a.st = statefile.NewStore(statefile.Options{
		// Called on a writer goroutine: post, never touch the UI from here.
		OnError: func(path string, err error) { a.inbox.post(noteMsg(describeErr("save failed", err))) },
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
	a.agents = newAgentSet(cfg.mode, cfg.agentCmd, a.inbox.post)
	if cfg.probePath != "" {
		a.probe = &probe{path: cfg.probePath}
	}
	a.ui = a.newUI()
	if len(notes) > 0 {
		a.ui.note = notes[len(notes)-1]
	}
	return a, nil
}

// shutdown is the quit path once the window is gone: agents are told to
// stop while the flush hook drains every store under its 2 s deadline, then
// the stores close and the probe writes its file.
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
	if err := a.probe.write(); err != nil {
		os.Stderr.WriteString("offmain-gui: typing probe: " + err.Error() + "\n")
	}
	return rep
}

// closeStore closes the statefile store after a failed open.
func (a *app) closeStore() error {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return a.st.Close(ctx)
}
