package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/offmain/offmain/qos"
)

// bench is one run: its scratch folder, the app's probes, the load workers
// and the results. Its methods run on the run's goroutine.
type bench struct {
	cfg     *config
	fs      *scratch
	app     *app
	pool    *pool
	env     envInfo
	res     *results
	prog    *progress
	order   *rand.Rand           // the arms' order in each round
	own     threadTier           // the bench's main thread: the default arm's tier
	ownAG   string               // the bench's autogroup
	applied map[string]*expected // arm -> the tier every thread of its workers was found at
}

// run parses args and runs the bench; the workers are this binary re-executed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if len(cfg.iosched) > 0 {
		return runSchedulers(ctx, cfg, exe, stdout, stderr)
	}
	return runBench(ctx, cfg, exe, stdout, stderr)
}

// runBench measures every arm for every round and writes the outputs. Its
// deferred cleanup (kill every worker's process group, close statefile,
// remove the scratch folder) runs on return, on Ctrl-C (ctx) and on a panic.
func runBench(ctx context.Context, cfg *config, exe string, stdout, stderr io.Writer) (err error) {
	start := time.Now()
	env, err := machineEnv(ctx)
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, env: env, res: newResults(cfg.arms, cfg.rounds), applied: map[string]*expected{},
		order: rand.New(rand.NewPCG(cfg.seed, 1)),
		pool:  &pool{exe: exe, pace: cfg.pace, marker: fmt.Sprintf("%d-%d", os.Getpid(), start.UnixNano())}}
	defer func() { err = errors.Join(err, b.close()) }()
	// The probes stand for separate GUI threads, most locked to their own OS
	// thread: -gomaxprocs (default probeProcs) gives each its own P, so only
	// the kernel decides; -gomaxprocs 0 keeps Go's default, the core count.
	b.env.GoDefault = runtime.GOMAXPROCS(0)
	if cfg.gomaxprocs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.gomaxprocs))
	}
	b.env.GoMaxProcs = runtime.GOMAXPROCS(0)
	b.prog = newProgress(stderr, b.steps(), cfg.quiet)
	if err := b.setup(ctx); err != nil {
		return err
	}
	for r := range cfg.rounds {
		if err := b.round(ctx, r); err != nil {
			return err
		}
	}
	b.prog.finish()
	b.env.Wall = time.Since(start).Round(time.Second).String()
	return b.output(stdout)
}

// steps is the progress bar's length: one step per second of probe window,
// one for the setup.
func (b *bench) steps() int {
	return 1 + b.cfg.rounds*len(b.cfg.arms)*int(b.cfg.duration/time.Second)
}

func (b *bench) setup(ctx context.Context) error {
	b.prog.describe("making files")
	var err error
	if b.cfg.cgroup != "" {
		// First, so the bench's own files are charged to its leaf.
		if b.pool.cg, err = newBenchCgroup(b.cfg.cgroup, scratchParent(b.cfg), b.cfg.arms); err != nil {
			return err
		}
	}
	if b.fs, err = newScratch(b.cfg); err != nil {
		return err
	}
	b.pool.ctrDir = filepath.Join(b.fs.loadDir, "counters")
	if err := os.Mkdir(b.pool.ctrDir, 0o700); err != nil {
		return err
	}
	if err := b.readOwnTier(); err != nil {
		return err
	}
	b.env.Scratch = b.fs.root
	b.env.IOScheduler = ioScheduler(b.fs.root)
	b.app, err = newApp(b.fs.appDir)
	if err != nil {
		return fmt.Errorf("making the app's files: %w", err)
	}
	b.env.ReadMethod = "4 KiB, " + b.app.read.method()
	b.app.only, b.env.Probes = b.cfg.probes, b.cfg.probes
	b.env.Duration, b.env.Rounds, b.env.Seed = b.cfg.duration.String(), b.cfg.rounds, b.cfg.seed
	for _, a := range b.cfg.arms {
		b.env.Arms = append(b.env.Arms, a.name)
	}
	b.env.Marker = runEnv + "=" + b.pool.marker
	b.env.Load = fmt.Sprintf("%d CPU spinners, %d writers (1 MiB writes, fsync every 32 MiB), %d metadata storms (walk and stat %d files), %d uncached readers (128 KiB reads of a %d MiB file)",
		b.cfg.spinners, b.cfg.writers, b.cfg.storms, b.cfg.treeDirs*b.cfg.treeFiles, b.cfg.readers, b.cfg.readerMiB)
	b.env.Pace = b.cfg.pace.String()
	b.env.Load += halvesLoad(b.cfg.arms, b.cfg.spinners, b.cfg.pace)
	b.prog.add(1)
	return ctx.Err()
}

// readOwnTier reads the bench's own tier and autogroup, which the default
// arm's workers inherit and the other arms must be below.
func (b *bench) readOwnTier() error {
	t, _, err := readThreadTier(os.Getpid(), os.Getpid())
	if err != nil {
		return err
	}
	ap, err := qos.Inspect(os.Getpid())
	if err != nil {
		return err
	}
	b.own, b.ownAG = t, ap.Autogroup
	return nil
}

// round runs every arm once, in an order shuffled from the seed, so no arm
// always follows the same one (a writer's dirty pages, a warm cache).
func (b *bench) round(ctx context.Context, r int) error {
	order := slices.Clone(b.cfg.arms)
	b.order.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var names []string
	for _, a := range order {
		names = append(names, a.name)
	}
	b.env.Orders = append(b.env.Orders, names)
	for _, a := range order {
		if err := b.runArm(ctx, a, r); err != nil {
			return fmt.Errorf("round %d, arm %s: %w", r+1, a.name, err)
		}
	}
	return nil
}
