// Command typebench measures how long a typed key takes to reach the
// presented frame in the gui example, under Xvfb: saves on the UI goroutine
// (-sync-saves, what apps do today) against offmain, idle and with agents
// busy (at qos's utility and background modes), at the default GOMAXPROCS
// and raised. Its baseline has agents too, quiet ones that print the same
// lines, so that both draw the same window. It is the GUI counterpart of examples/composer/typebench; the
// README has its table.
//
// Each round runs every arm once, in an order shuffled by -seed, so what
// drifts on a shared machine over minutes falls on all arms alike. For each
// arm it starts a private Xvfb, starts the app with OFFMAIN_TYPING_PROBE,
// waits for its first frame (and, with agents, for them to get going, while
// it times a fixed memory copy and a fixed CPU loop of its own), sends keys
// at a human pace through XTEST, closes the window as a window manager does,
// and joins the probe's CSV with the times it sent the keys. It also reads
// the CPU time and run-queue wait of the app's and the X server's threads
// over the typing (/proc/PID/task/TID/schedstat), which tells a frame that
// waited for a CPU from one whose work ran slower.
//
//	go -C examples/gui run ./typebench [-rounds 5] [-keys 60] [-pace 150ms] [-arms all]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
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
	agents     agents
	qos        string // the agents' OFFMAIN_QOS; "" is the default (utility)
	gomaxprocs int    // 0: the default
	base       int    // index of the arm it is compared with; -1 for none
}

// agents says what every chat's agent does during an arm.
type agents int

const (
	noAgents    agents = iota // no agents: the transcripts stay empty
	quietAgents               // agents print the stand-in's status line every second and load nothing
	busyAgents                // the stand-in (or -agent): CPU spinners and fsync'd writes
)

// quietAgent prints what the app's stand-in prints (examples/gui/worker.go),
// so the window shows the same kind of text at the same rate as with busy
// agents, without their load: the frames then cost the same to draw, and
// what the busy arms add is the load alone.
const quietAgent = `echo "stand-in load started: 0 spinners, no writes"; i=0; ` +
	`while sleep 1; do i=$((i+1)); echo "up ${i}s, 0 spinners, 0 MiB written, 0 fsyncs"; done`

var allArms = []arm{
	{name: "sync saves, agents quiet", syncSaves: true, agents: quietAgents, base: -1},
	{name: "sync saves, agents busy", syncSaves: true, agents: busyAgents, base: 0},
	{name: "offmain, agents quiet", agents: quietAgents, base: -1},
	{name: "offmain, agents busy", agents: busyAgents, base: 2},
	{name: "offmain, agents busy, qos background", agents: busyAgents, qos: "background", base: 2},
	{name: "sync saves, agents busy, GOMAXPROCS=8", syncSaves: true, agents: busyAgents, gomaxprocs: 8, base: 0},
	{name: "offmain, agents busy, GOMAXPROCS=8", agents: busyAgents, gomaxprocs: 8, base: 2},
	{name: "offmain, no agents", agents: noAgents, base: -1},
}

// config is the command line.
type config struct {
	rounds, keys int
	pace, warm   time.Duration
	only         string // comma-separated 1-based arm numbers; "" for all
	seed         uint64
	agent        string // the agents' command; "" for the app's stand-in
	keep         bool
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs every arm once in a shuffled order (5 or more give intervals)")
	flag.IntVar(&c.keys, "keys", 60, "keys per arm per round")
	flag.DurationVar(&c.pace, "pace", 150*time.Millisecond, "time between keys (a fast typist: 80 words a minute is about 150 ms a key)")
	flag.DurationVar(&c.warm, "warm", 4*time.Second, "wait after the first frame before typing (agents get going; the calibration runs in it)")
	flag.StringVar(&c.only, "arms", "", "comma-separated arm numbers to run, 1-based (default: all)")
	flag.Uint64Var(&c.seed, "seed", 0, "seed for the arms' order and the intervals' resampling (0: from the clock, printed)")
	flag.StringVar(&c.agent, "agent", "", "the agents' command, passed to the app's -agent (default: its CPU- and disk-heavy stand-in)")
	flag.BoolVar(&c.keep, "keep", false, "keep the temp folder (CSV files, the binary)")
	flag.Parse()
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	if err := runAll(c); err != nil {
		fmt.Fprintln(os.Stderr, "typebench:", err)
		os.Exit(1)
	}
}

func runAll(c config) error {
	arms, err := selectArms(c.only)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "gui-typebench-")
	if err != nil {
		return err
	}
	if c.keep {
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
	rng := rand.New(rand.NewPCG(c.seed, 0))
	results := make([]*result, len(allArms))
	for _, i := range arms {
		results[i] = &result{arm: allArms[i]}
	}
	for round := range c.rounds {
		order := append([]int(nil), arms...)
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, i := range order {
			fmt.Fprintf(os.Stderr, "typebench: round %d/%d, arm %d: %s\n", round+1, c.rounds, i+1, allArms[i].name)
			dir := filepath.Join(tmp, fmt.Sprintf("r%d-arm%d", round+1, i+1))
			r, err := runArm(bin, dir, allArms[i], c)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, allArms[i].name, err)
			}
			results[i].rounds = append(results[i].rounds, r)
		}
	}
	printHeader(os.Stdout, c)
	printTable(os.Stdout, results, c.seed)
	return nil
}

// selectArms parses -arms into indexes of allArms, in order.
func selectArms(only string) ([]int, error) {
	var out []int
	for i := range allArms {
		if only == "" || strings.Contains(","+only+",", fmt.Sprintf(",%d,", i+1)) {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-arms %q names none of arms 1-%d", only, len(allArms))
	}
	return out, nil
}

// startApp starts the app and waits for its first frame.
// The goroutine that copies the rest of its stderr into log ends when the
// app exits; done is closed then.
func startApp(ctx context.Context, bin, dir, display, probe string, a arm, agent string) (cmd *exec.Cmd, log *lockedLog, err error) {
	args := []string{"-dir", filepath.Join(dir, "state")}
	if a.syncSaves {
		args = append(args, "-sync-saves")
	}
	switch {
	case a.agents == quietAgents:
		args = append(args, "-agents", "-agent", quietAgent)
	case a.agents == busyAgents && agent != "":
		args = append(args, "-agents", "-agent", agent)
	case a.agents == busyAgents:
		args = append(args, "-agents")
	}
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "WAYLAND_DISPLAY=", "XDG_RUNTIME_DIR="+dir,
		"OFFMAIN_TYPING_PROBE="+probe, "OFFMAIN_QOS="+a.qos)
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
