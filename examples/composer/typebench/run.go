package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/offmain/offmain/examples/composer/internal/tmux"
)

// The strings the composer shows that the bench waits for.
const (
	readyText = "ctrl+c quit"          // its help line: the first full frame is drawn
	agentsUp  = "3 agents:"            // its status line once 3 agents report their tier
	chats     = "general,build,review" // 3 chats, so 3 agents
	composer  = "┃ "                   // the composer's prompt
	flushLine = "flush: "              // the start of the flush report it prints at quit
	stepWait  = 30 * time.Second       // bound on each wait
	pollEvery = 50 * time.Millisecond  // capture-pane interval while waiting for the screen
)

// runArm runs the composer once as a sets up, types, quits, and returns the
// probe's rows of the typed keys and the app's flush report. Everything it
// makes lives under dir, which the caller removes.
func runArm(ctx context.Context, o options, a arm, dir string) ([]keyRow, string, error) {
	tmp := filepath.Join(dir, "tmp") // the agents' scratch folders go here
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, "", err
	}
	probe := filepath.Join(dir, "probe.csv")
	argv := []string{o.bin, "-dir", filepath.Join(dir, "state"), "-chats", chats}
	if a.sync {
		argv = append(argv, "-sync-saves")
	}
	if a.agents {
		argv = append(argv, "-agents")
	}
	env := []string{"OFFMAIN_TYPING_PROBE=" + probe, "OFFMAIN_QOS=" + a.qos, "TMPDIR=" + tmp}
	srv, err := tmux.Start(dir, o.w, o.h, env, argv)
	if err != nil {
		return nil, "", err
	}
	rep, err := drive(ctx, o, a, srv)
	err = errors.Join(err, srv.Close(), leftovers(dir, tmp))
	if err != nil {
		return nil, rep, err
	}
	f, err := os.Open(probe)
	if err != nil {
		return nil, rep, err
	}
	defer f.Close()
	rows, err := readProbe(f, text(o.keys))
	return rows, rep, err
}

// drive waits for the app, types, quits, and returns the flush report line.
func drive(ctx context.Context, o options, a arm, srv *tmux.Server) (string, error) {
	wait := func(text string) error {
		c, cancel := context.WithTimeout(ctx, stepWait)
		defer cancel()
		_, err := srv.WaitScreen(c, text, pollEvery)
		return err
	}
	if err := wait(readyText); err != nil {
		return "", err
	}
	if a.agents {
		if err := wait(agentsUp); err != nil {
			return "", err
		}
		if err := pause(ctx, o.warmup); err != nil {
			return "", err
		}
	}
	keys := text(o.keys)
	if err := typeKeys(ctx, srv, keys, o.interval); err != nil {
		return "", err
	}
	// The last frame shows the whole text: every key's frame is written.
	if err := wait(composer + strings.TrimRight(keys, " ")); err != nil {
		return "", err
	}
	if err := srv.SendKeys("C-c"); err != nil {
		return "", err
	}
	c, cancel := context.WithTimeout(ctx, stepWait)
	defer cancel()
	status, screen, err := srv.WaitExit(c)
	if err != nil {
		return "", err
	}
	rep := "no report"
	for l := range strings.Lines(screen) {
		if strings.HasPrefix(l, flushLine) {
			rep = strings.TrimSpace(l)
		}
	}
	if status != 0 {
		return rep, fmt.Errorf("the composer exited with status %d:\n%s", status, screen)
	}
	return rep, nil
}

// typeKeys types keys one at a time, interval apart, on a ticker.
func typeKeys(ctx context.Context, srv *tmux.Server, keys string, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for i, k := range keys {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
		if err := srv.SendText(string(k)); err != nil {
			return err
		}
	}
	return nil
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// leftovers reports processes still running from this arm (the app, found
// by its -dir, still quitting after the server's SIGHUP) a few seconds after
// the run, and scratch folders that agents did not remove. It kills such
// processes, by pid, so that no run outlives the bench.
func leftovers(dir, tmp string) error {
	var errs []error
	running := func() []string {
		out, _ := exec.Command("pgrep", "-f", dir).Output()
		return strings.Fields(string(out))
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for range 50 {
		if len(running()) == 0 {
			break
		}
		<-t.C
	}
	if pids := running(); len(pids) > 0 {
		for _, s := range pids {
			if pid, err := strconv.Atoi(s); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
		errs = append(errs, fmt.Errorf("processes still running after the run (killed): %v", pids))
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "composer-agent-*")); len(left) > 0 {
		errs = append(errs, fmt.Errorf("agents left scratch folders: %v", left))
	}
	return errors.Join(errs...)
}
