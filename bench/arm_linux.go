package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// runArm starts the arm's load, runs the probes for one window with a
// snapshot of the machine and the agents' progress at each end, checks
// every worker thread's tier, and stops the load.
func (b *bench) runArm(ctx context.Context, a arm, r int) (err error) {
	b.prog.describe(fmt.Sprintf("round %d/%d: %s", r+1, b.cfg.rounds, a.name))
	defer func() { err = errors.Join(err, b.stopLoad()) }()
	if err := b.startLoad(ctx, a); err != nil {
		return err
	}
	if b.cfg.onArm != nil {
		b.cfg.onArm(a.name)
	}
	s0, err := b.snap()
	if err != nil {
		return err
	}
	var s1 snapshot
	var snapErr error
	plan := stallPlan(r)
	series, reports, err := b.app.run(ctx, b.cfg.duration, plan, func() { s1, snapErr = b.snap() })
	if err != nil || snapErr != nil {
		return errors.Join(err, snapErr)
	}
	if a.hasLoad() {
		if err := b.checkApplied(a); err != nil {
			return err
		}
	}
	if err := checkSamples(series, b.cfg.duration, plan); err != nil {
		return err
	}
	b.res.add(a.name, r, series)
	for _, rep := range reports {
		rep.Arm, rep.Round = a.name, r+1
		b.res.stall = append(b.res.stall, rep)
	}
	b.res.add(a.name, r, windowSeries(s0, s1))
	b.prog.add(int(b.cfg.duration / time.Second))
	return nil
}

func (b *bench) output(stdout io.Writer) error {
	b.env.Applied = map[string]string{}
	for name, ex := range b.applied {
		b.env.Applied[name] = ex.String()
	}
	b.env.Checked = fmt.Sprintf("every thread of every process of every worker's tree read back at the end of each window, all %d round(s): nice, policy, I/O priority, autogroup; none off-tier", b.cfg.rounds)
	rep := report{Env: b.env, Rows: b.res.rows(b.cfg.seed), StallReports: b.res.stall}
	for i := range rep.Rows {
		rep.Rows[i].IOSched = activeName(b.env.IOScheduler)
	}
	if err := renderTable(stdout, rep.Env, rep.Rows); err != nil {
		return err
	}
	split := splitLines(rep.Env.Arms, rep.Rows)
	if err := writeSplit(stdout, split); err != nil {
		return err
	}
	if b.cfg.jsonPath != "" {
		if err := writeJSON(b.cfg.jsonPath, splitReport{rep, split}); err != nil {
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
	if b.pool.cg != nil {
		errs = append(errs, b.pool.cg.close())
	}
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
