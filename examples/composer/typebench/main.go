// Command typebench measures how long a typed key takes to reach the screen
// in the composer example, with saves on the UI loop (-sync-saves, what apps
// do today) against saves through offmain, idle and with agents busy.
//
// For each run it starts the composer in a private tmux server (a real
// terminal), waits for its agents, types keys at a fixed interval with
// send-keys, quits with ctrl+c, and reads the typing probe's CSV
// (OFFMAIN_TYPING_PROBE). It then prints, per hop and per segment, the
// median, p95 and range of every run side by side. It removes every folder
// it made and leaves no process behind: each run's tmux server is killed,
// and the app stops its agents at quit.
//
// From the repository root (the composer is a module of its own):
//
//	go -C examples/composer run ./typebench
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// arm is one run's setup: how the app saves, whether agents run, and the
// qos mode they are started with.
type arm struct {
	name, label string
	sync        bool
	agents      bool
	qos         string
}

var arms = []arm{
	{"sync-idle", "sync saves, idle", true, false, "off"},
	{"sync-busy", "sync saves, agents busy", true, true, "off"},
	{"offmain-busy", "offmain, agents busy", false, true, "utility"},
	{"offmain-idle", "offmain, idle", false, false, "utility"},
	{"offmain-saves-busy", "offmain saves, agents busy at qos off", false, true, "off"},
	{"sync-saves-qos", "sync saves, agents busy at qos utility", true, true, "utility"},
}

// typedText is what the bench types: 61 keys.
const typedText = "the quick brown fox jumps over the lazy dog as agents compile"

type options struct {
	bin      string
	arms     []arm
	keys     int
	interval time.Duration
	warmup   time.Duration
	keep     bool
	w, h     int
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "typebench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "typebench:", err)
		stop()
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("typebench", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "", "a composer binary to run (default: build one with go build into a temp folder)")
	names := fs.String("arms", "sync-idle,sync-busy,offmain-busy,offmain-idle,offmain-saves-busy,sync-saves-qos", "the runs, in order")
	fs.IntVar(&o.keys, "keys", len(typedText), "keys to type per run")
	fs.DurationVar(&o.interval, "interval", 300*time.Millisecond, "time between keys")
	fs.DurationVar(&o.warmup, "warmup", 3*time.Second, "wait after the agents are up, before typing")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp folder (probe CSVs, state) and print where it is")
	fs.IntVar(&o.w, "width", 120, "terminal width")
	fs.IntVar(&o.h, "height", 36, "terminal height")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for n := range strings.SplitSeq(*names, ",") {
		i := findArm(strings.TrimSpace(n))
		if i < 0 {
			return o, fmt.Errorf("unknown arm %q", n)
		}
		o.arms = append(o.arms, arms[i])
	}
	if o.keys < 1 || o.interval <= 0 {
		return o, errors.New("-keys and -interval must be positive")
	}
	return o, nil
}

func findArm(name string) int {
	for i, a := range arms {
		if a.name == name {
			return i
		}
	}
	return -1
}

// text returns the n keys to type.
func text(n int) string {
	return strings.Repeat(typedText, n/len(typedText)+1)[:n]
}

func bench(ctx context.Context, o options) (err error) {
	root, err := os.MkdirTemp("", "typebench-")
	if err != nil {
		return err
	}
	defer func() {
		if o.keep {
			fmt.Fprintln(os.Stderr, "typebench: kept", root)
			return
		}
		err = errors.Join(err, os.RemoveAll(root))
	}()
	if o.bin == "" {
		if o.bin, err = build(ctx, root); err != nil {
			return err
		}
	}
	var labels []string
	var runs [][]keyRow
	var reports []string
	for i, a := range o.arms {
		fmt.Fprintf(os.Stderr, "typebench: run %d/%d: %s\n", i+1, len(o.arms), a.label)
		rows, rep, err := runArm(ctx, o, a, filepath.Join(root, a.name))
		if err != nil {
			return fmt.Errorf("%s: %w", a.label, err)
		}
		labels, runs = append(labels, a.label), append(runs, rows)
		reports = append(reports, fmt.Sprintf("- %s: %s", a.label, rep))
	}
	fmt.Print(header(o))
	fmt.Println()
	fmt.Print(table(labels, runs))
	fmt.Println()
	fmt.Println("Quit-time flush reports:")
	fmt.Println(strings.Join(reports, "\n"))
	return nil
}

// build builds the composer into dir. It must run inside the composer's
// module (go -C examples/composer run ./typebench does).
func build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "composer")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/offmain/offmain/examples/composer")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build of the composer (run typebench from examples/composer, or pass -bin): %w", err)
	}
	return bin, nil
}

// header describes the machine and the method.
func header(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "typebench: %d keys %v apart per run, typed with tmux send-keys into a %dx%d pane; %s, %d CPUs",
		o.keys, o.interval, o.w, o.h, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU())
	if k, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		fmt.Fprintf(&b, ", kernel %s", strings.TrimSpace(string(k)))
	}
	fmt.Fprintf(&b, ".\nAgents busy: each of the 3 chats runs the built-in stand-in agent (a spinner per CPU, 1 MiB writes with an fsync every 8 MiB), started %v before typing.\n", o.warmup)
	return b.String()
}
