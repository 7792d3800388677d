package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errUsage marks a bad command line; main exits with status 2.
var errUsage = errors.New("bench: usage")

// armKind says how an arm starts its load.
type armKind int

const (
	armIdle       armKind = iota // no load at all
	armDefault                   // load at nice 0: today, without this module
	armAgent                     // qos.Start at the Agent tier, mode utility
	armBackground                // qos.Start at the Agent tier, mode background
	armSetsid                    // as agent, each worker in its own session, no autogroup fix
	armSetsidFix                 // as agent, each worker in its own session, with the fix
	armNice                      // load at nice N, I/O unchanged (exploration)
	armIdleClass                 // load at SCHED_IDLE only (exploration)
	armCgroup                    // qos.Group with Cgroup, Agent tier, mode utility (cgroup_arms.go)
)

// arm is one column of the table: a way to run the load.
type arm struct {
	name string
	kind armKind
	nice int // armNice only

	load string  // "": the whole load; loadCPU or loadIO: one half of it (split.go)
	io   ioSetup // armCgroup only: what the bench does with the io controller (cgroup_arms.go)
}

// hasLoad reports whether the arm starts workers.
func (a arm) hasLoad() bool { return a.kind != armIdle }

// defaultArms is the -arms default: the arms that answer what qos buys.
const defaultArms = "idle,default,agent,background,setsid,setsid-fix"

var namedArms = map[string]armKind{
	"idle": armIdle, "default": armDefault, "agent": armAgent, "background": armBackground,
	"setsid": armSetsid, "setsid-fix": armSetsidFix, "idleclass": armIdleClass,
}

// parseArms parses a comma-separated -arms value.
func parseArms(s string) ([]arm, error) {
	var arms []arm
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		a, err := parseArm(name)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(arms, func(b arm) bool { return b.name == a.name }) {
			return nil, fmt.Errorf("%w: -arms: %q given twice", errUsage, name)
		}
		arms = append(arms, a)
	}
	return arms, nil
}

func parseArm(name string) (arm, error) {
	if base, load, ok := splitName(name); ok {
		return parseHalf(base, load)
	}
	if a, ok, err := parseCgroupArm(name); ok {
		return a, err
	}
	if k, ok := namedArms[name]; ok {
		return arm{name: name, kind: k}, nil
	}
	if v, ok := strings.CutPrefix(name, "nice:"); ok {
		// setpriority(2): nice runs from -20 to 19; lowering needs no privilege,
		// so only 0..19 is accepted.
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 19 {
			return arm{}, fmt.Errorf("%w: -arms: %q: N in nice:N must be 0..19", errUsage, name)
		}
		return arm{name: "nice:" + strconv.Itoa(n), kind: armNice, nice: n}, nil
	}
	return arm{}, fmt.Errorf("%w: -arms: unknown arm %q (want idle, default, agent, background, setsid, setsid-fix, idleclass, nice:N, %s; any arm with load/cpu or /io)", errUsage, name, cgroupArmNames)
}

// probeProcs is the default GOMAXPROCS while the probes run: the 8 probe
// goroutines plus statefile's writers (its default MaxParallel is 4) plus
// stall's watcher and sampler while it watches, so Go's scheduler never
// queues one probe behind another and only the kernel decides. statefile's
// docs ("Few cores") warn that at GOMAXPROCS 2 a Save can wait for a P;
// -gomaxprocs 0 measures that.
const probeProcs = 8 + 4 + 2

// config is the parsed command line.
type config struct {
	duration time.Duration // probe window per arm and round
	rounds   int
	arms     []arm
	quick    bool
	jsonPath string
	svgPath  string
	quiet    bool
	dir      string // parent of the scratch folder; "" means the user cache dir
	spinners int
	writers  int
	storms   int
	readers  int
	// Sizes of the files the bench makes; smaller with -quick.
	treeDirs, treeFiles int // metadata storm tree
	readerMiB           int // file the uncached readers read
	seed                uint64
	gomaxprocs          int      // GOMAXPROCS while the probes run; 0 leaves Go's default
	pace                pace     // offered rate per I/O worker; zero: closed loops
	iosched             []string // I/O schedulers to run under, in turn; "all"; nil: the current one
	split               bool     // add each tier arm's halves of the load (split.go)
	cgroup              string   // the cgroup v2 directory delegated to the bench; "" for none (cgroup_arms.go)
	probes              []string // the app's probes that run; nil: all (probeNames)
	// onArm, when set (tests only), is called once the arm's load is running.
	onArm func(arm string)
}

// probeNames are the app's probes (app.probes), in the table's order.
var probeNames = []string{"frame", "burst", "read", "fsync", "save-sync", "save-statefile", uiSync, uiStatefile}

// parseProbes parses -probes: "" is every probe (nil).
func parseProbes(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case !slices.Contains(probeNames, name):
			return nil, fmt.Errorf("%w: -probes: no probe %q (there are %s)", errUsage, name, strings.Join(probeNames, ", "))
		case slices.Contains(out, name):
			return nil, fmt.Errorf("%w: -probes: %q given twice", errUsage, name)
		}
		out = append(out, name)
	}
	return out, nil
}

// uiRuns reports whether only, the probes that run (nil: all), has a ui loop.
func uiRuns(only []string) bool {
	return only == nil || slices.Contains(only, uiSync) || slices.Contains(only, uiStatefile)
}

// parseConfig parses args; -quick changes the defaults of flags not given.
func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "duration", 8*time.Second, "probe window per arm and round")
	fs.IntVar(&c.rounds, "rounds", minCIRounds, "rounds; intervals need at least 5")
	armList := fs.String("arms", defaultArms, "comma-separated arms; also nice:N (0..19) and idleclass")
	fs.BoolVar(&c.quick, "quick", false, "every arm and probe, shorter (4s windows, 1 round: no intervals, smaller files)")
	fs.StringVar(&c.jsonPath, "json", "", "write the figures as JSON to `FILE`")
	fs.StringVar(&c.svgPath, "svg", "", "write the latency distributions as SVG to `FILE`")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
	fs.StringVar(&c.dir, "dir", "", "parent `DIR` of the scratch folder (default: the user cache dir)")
	fs.IntVar(&c.spinners, "spinners", 3*runtime.NumCPU(), "CPU spinner workers")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the round order and the bootstrap")
	fs.IntVar(&c.gomaxprocs, "gomaxprocs", probeProcs, "GOMAXPROCS while the probes run; 0: Go's default (the core count)")
	ioschedFlag := fs.String("iosched", "", "run under each I/O `SCHED`uler in turn (comma-separated, or all), switching the scratch disk's; needs root")
	paceFlag := fs.String("pace", "", "offered rate per I/O worker, e.g. `write=20,read=20,meta=2000` (MB/s, MB/s, files/s); default closed loops")
	fs.BoolVar(&c.split, "split", false, "also run each tier arm under the CPU half and the I/O half of the load alone (arm/cpu, arm/io)")
	fs.StringVar(&c.cgroup, "cgroup", "", "cgroup v2 `DIR` delegated to the bench, for the cgroup arms")
	probeList := fs.String("probes", "", "run only these of the app's probes (comma-separated; default all: "+strings.Join(probeNames, ",")+")")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.applySizes(set)
	var err error
	if c.arms, err = parseArms(*armList); err != nil {
		return nil, err
	}
	if c.split {
		c.arms = withHalves(c.arms)
	}
	if err := c.validateCgroup(); err != nil {
		return nil, err
	}
	if c.probes, err = parseProbes(*probeList); err != nil {
		return nil, err
	}
	if *ioschedFlag != "" {
		c.iosched = strings.Split(*ioschedFlag, ",")
	}
	if c.pace, err = parsePace(*paceFlag); err != nil {
		return nil, err
	}
	return c, c.validate()
}

// applySizes fills the load sizes, smaller with -quick unless a flag says otherwise.
func (c *config) applySizes(set map[string]bool) {
	c.writers, c.storms, c.readers = 2, 2, 2
	c.treeDirs, c.treeFiles, c.readerMiB = 40, 100, 64
	if !c.quick {
		return
	}
	if !set["duration"] {
		c.duration = 4 * time.Second
	}
	if !set["rounds"] {
		c.rounds = 1
	}
	c.treeDirs, c.readerMiB = 10, 16
}

func (c *config) validate() error {
	switch {
	case c.duration < time.Second:
		return fmt.Errorf("%w: -duration %v: at least 1s (the saves run every 300ms)", errUsage, c.duration)
	case c.rounds < 1:
		return fmt.Errorf("%w: -rounds %d: at least 1", errUsage, c.rounds)
	case c.spinners < 0:
		return fmt.Errorf("%w: -spinners %d: not negative", errUsage, c.spinners)
	case c.gomaxprocs < 0:
		return fmt.Errorf("%w: -gomaxprocs %d: not negative", errUsage, c.gomaxprocs)
	case os.Getenv(stallEnv) != "":
		// stall.Watch obeys it, which would make the stall-on quarters
		// something else than the table says.
		return fmt.Errorf("%w: %s=%q: the bench turns stall on and off itself; unset it", errUsage, stallEnv, os.Getenv(stallEnv))
	}
	return nil
}
