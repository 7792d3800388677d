package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// probeProcs is GOMAXPROCS while the probes run: the 8 probe goroutines plus
// statefile's writers (its default MaxParallel is 4).
const probeProcs = 8 + 4

// bench is one run: its scratch folder, the app's probes, the load workers
// and the results. Its methods run on the run's goroutine.
type bench struct {
	cfg  *config
	fs   *scratch
	app  *app
	pool *pool
	env  envInfo
	res  *results
	prog *progress
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
	b := &bench{cfg: cfg, env: env, res: newResults(cfg.arms, cfg.rounds),
		pool: &pool{exe: exe, marker: fmt.Sprintf("%d-%d", os.Getpid(), start.UnixNano())}}
	defer func() { err = errors.Join(err, b.close()) }()
	// The probes stand for separate GUI threads, most locked to their own OS
	// thread. With GOMAXPROCS at the core count, Go's scheduler would queue
	// them behind each other; give each its own P so only the kernel decides.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), probeProcs)))
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
// one per cost job, one for the setup.
func (b *bench) steps() int {
	secs := int(b.cfg.duration / time.Second)
	loaded := 0
	for _, a := range b.cfg.arms {
		if a.hasLoad() {
			loaded++
		}
	}
	return 1 + b.cfg.rounds*(len(b.cfg.arms)*secs+loaded)
}

func (b *bench) setup(ctx context.Context) error {
	b.prog.describe("making files")
	var err error
	if b.fs, err = newScratch(b.cfg); err != nil {
		return err
	}
	b.env.Scratch = b.fs.root
	b.env.IOScheduler = ioScheduler(b.fs.root)
	b.app, err = newApp(b.fs.appDir)
	if err != nil {
		return fmt.Errorf("making the app's files: %w", err)
	}
	b.env.ReadMethod = "4 KiB, " + b.app.read.method()
	b.env.Duration, b.env.Rounds = b.cfg.duration.String(), b.cfg.rounds
	for _, a := range b.cfg.arms {
		b.env.Arms = append(b.env.Arms, a.name)
	}
	b.env.Marker = runEnv + "=" + b.pool.marker
	b.env.Load = fmt.Sprintf("%d CPU spinners, %d writers (1 MiB writes, fsync every 32 MiB), %d metadata storms (walk and stat %d files), %d uncached readers (128 KiB reads of a %d MiB file)",
		b.cfg.spinners, b.cfg.writers, b.cfg.storms, b.cfg.treeDirs*b.cfg.treeFiles, b.cfg.readers, b.cfg.readerMiB)
	b.prog.add(1)
	return ctx.Err()
}

// round runs every arm once, interleaved, in the given order in odd rounds
// and reversed in even ones, then the agent-cost job at each loaded arm's tier.
func (b *bench) round(ctx context.Context, r int) error {
	order := slices.Clone(b.cfg.arms)
	if r%2 == 1 {
		slices.Reverse(order)
	}
	for _, a := range order {
		if err := b.runArm(ctx, a, r); err != nil {
			return fmt.Errorf("round %d, arm %s: %w", r+1, a.name, err)
		}
	}
	for _, a := range b.cfg.arms {
		if !a.hasLoad() {
			continue
		}
		b.prog.describe(fmt.Sprintf("round %d/%d: agent cost at %s", r+1, b.cfg.rounds, a.name))
		took, err := b.pool.runJob(ctx, a, "job", strconv.Itoa(b.cfg.jobIters))
		if err != nil {
			return fmt.Errorf("round %d, agent cost at %s: %w", r+1, a.name, err)
		}
		b.res.add(a.name, r, map[string][]float64{"cost": {ms(took)}})
		b.prog.add(1)
	}
	return nil
}

// runArm records the load average, starts the arm's load, runs the probes
// for one window, and stops the load.
func (b *bench) runArm(ctx context.Context, a arm, r int) (err error) {
	b.prog.describe(fmt.Sprintf("round %d/%d: %s", r+1, b.cfg.rounds, a.name))
	_, one, err := loadavg()
	if err != nil {
		return err
	}
	b.res.add(a.name, r, map[string][]float64{"loadavg": {one}})
	defer func() { err = errors.Join(err, b.stopLoad()) }()
	if err := b.startLoad(ctx, a, r); err != nil {
		return err
	}
	if b.cfg.onArm != nil {
		b.cfg.onArm(a.name)
	}
	series, err := b.app.run(ctx, b.cfg.duration)
	if err != nil {
		return err
	}
	for k, v := range series {
		if len(v) == 0 {
			return fmt.Errorf("probe series %s has no samples in %v: the machine is too slow or too loaded for this -duration", k, b.cfg.duration)
		}
	}
	b.res.add(a.name, r, series)
	b.prog.add(int(b.cfg.duration / time.Second))
	return nil
}

func (b *bench) output(stdout io.Writer) error {
	rep := report{Env: b.env, Rows: b.res.rows()}
	if err := renderTable(stdout, rep.Env, rep.Rows); err != nil {
		return err
	}
	if b.cfg.jsonPath != "" {
		if err := writeJSON(b.cfg.jsonPath, rep); err != nil {
			return err
		}
	}
	if b.cfg.svgPath != "" {
		return writeSVG(b.cfg.svgPath, b.res)
	}
	return nil
}

// close kills every worker, closes the app's files and statefile, and
// removes the scratch folder, in that order (the workers write inside it).
func (b *bench) close() error {
	b.prog.finish()
	errs := []error{b.pool.stopAll()}
	if b.app != nil {
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		errs = append(errs, b.app.close(ctx))
	}
	if b.fs != nil {
		errs = append(errs, b.fs.remove())
	}
	return errors.Join(errs...)
}
