// Command typebench measures how long a typed key takes to reach the
// presented frame in the gui example, under Xvfb: saves on the UI goroutine
// (-sync-saves, what apps do today) against offmain, idle and with agents
// busy, at the default GOMAXPROCS and raised. It is the GUI counterpart of
// examples/composer/typebench; the README has its table.
//
// For each arm it builds the app once, starts a private Xvfb, starts the app
// with OFFMAIN_TYPING_PROBE, waits for its first frame (and, with agents,
// for them to get going), sends keys at a human pace through XTEST, closes
// the window as a window manager does, and joins the probe's CSV with the
// times it sent the keys.
//
//	go -C examples/gui run ./typebench [-keys 61] [-pace 150ms] [-arms all]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// arm is one configuration of the app.
type arm struct {
	name       string
	syncSaves  bool
	agents     bool
	gomaxprocs int // 0: the default
}

var allArms = []arm{
	{name: "sync saves, idle", syncSaves: true},
	{name: "sync saves, agents busy", syncSaves: true, agents: true},
	{name: "offmain, idle"},
	{name: "offmain, agents busy", agents: true},
	{name: "sync saves, agents busy, GOMAXPROCS=8", syncSaves: true, agents: true, gomaxprocs: 8},
	{name: "offmain, agents busy, GOMAXPROCS=8", agents: true, gomaxprocs: 8},
}

func main() {
	keys := flag.Int("keys", 61, "keys per arm")
	pace := flag.Duration("pace", 150*time.Millisecond, "time between keys (a fast typist: 80 words a minute is about 150 ms a key)")
	warm := flag.Duration("warm", 4*time.Second, "wait after the first frame before typing (agents get going)")
	only := flag.String("arms", "", "comma-separated arm numbers to run, 1-based (default: all)")
	keep := flag.Bool("keep", false, "keep the temp folder (CSV files, the binary)")
	flag.Parse()
	if err := runAll(*keys, *pace, *warm, *only, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "typebench:", err)
		os.Exit(1)
	}
}

func runAll(keys int, pace, warm time.Duration, only string, keep bool) error {
	tmp, err := os.MkdirTemp("", "gui-typebench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "typebench: files in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "offmain-gui")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the app (run from examples/gui): %w", err)
	}
	var results []result
	for i, a := range allArms {
		if only != "" && !strings.Contains(","+only+",", fmt.Sprintf(",%d,", i+1)) {
			continue
		}
		fmt.Fprintf(os.Stderr, "typebench: arm %d: %s\n", i+1, a.name)
		r, err := runArm(bin, filepath.Join(tmp, fmt.Sprintf("arm%d", i+1)), a, keys, pace, warm)
		if err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		results = append(results, r)
	}
	printTable(os.Stdout, results)
	return nil
}

// startX starts a private Xvfb and returns its display and its stop.
func startX() (string, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", nil, err
	}
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "800x600x24", "-nolisten", "tcp")
	x.ExtraFiles = []*os.File{w}
	if err := x.Start(); err != nil {
		return "", nil, fmt.Errorf("starting Xvfb (Debian: xvfb): %w", err)
	}
	_ = w.Close()
	stop := func() {
		_ = x.Process.Kill()
		_ = x.Wait()
	}
	line, _ := bufio.NewReader(r).ReadString('\n')
	_ = r.Close()
	if strings.TrimSpace(line) == "" {
		stop()
		return "", nil, fmt.Errorf("the X server (Xvfb) reported no display")
	}
	return ":" + strings.TrimSpace(line), stop, nil
}

// startApp starts the app and waits for its first frame.
// The goroutine that copies the rest of its stderr into log ends when the
// app exits; done is closed then.
func startApp(ctx context.Context, bin, dir, display, probe string, a arm) (cmd *exec.Cmd, log *lockedLog, err error) {
	args := []string{"-dir", filepath.Join(dir, "state")}
	if a.syncSaves {
		args = append(args, "-sync-saves")
	}
	if a.agents {
		args = append(args, "-agents")
	}
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "WAYLAND_DISPLAY=", "XDG_RUNTIME_DIR="+dir,
		"OFFMAIN_TYPING_PROBE="+probe)
	if a.gomaxprocs > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", a.gomaxprocs))
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	log = &lockedLog{done: make(chan struct{})}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.add(sc.Text())
		if strings.Contains(sc.Text(), "first frame presented") {
			go func() {
				defer close(log.done)
				for sc.Scan() {
					log.add(sc.Text())
				}
			}()
			return cmd, log, nil
		}
	}
	_ = cmd.Wait()
	return nil, nil, fmt.Errorf("no first frame:\n%s", log)
}

// lockedLog is the app's stderr, line by line.
type lockedLog struct {
	mu   sync.Mutex // protects b
	b    bytes.Buffer
	done chan struct{} // closed when the app's stderr ended
}

func (l *lockedLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(line + "\n")
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
