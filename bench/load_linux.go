package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// startLoad starts the arm's workers, I/O workers first and spinners last, so
// no worker has to fork beside a full set of spinners (issue 6: a SCHED_IDLE
// fork beside busy loops waited 9-35 s). It records, in the first round,
// what one spinner really runs at.
func (b *bench) startLoad(ctx context.Context, a arm, r int) error {
	if !a.hasLoad() {
		return nil
	}
	c := b.cfg
	for i := range c.writers {
		if err := b.pool.start(ctx, a, "write", b.fs.writerPath(i)); err != nil {
			return err
		}
	}
	for range c.storms {
		if err := b.pool.start(ctx, a, "meta", b.fs.tree); err != nil {
			return err
		}
	}
	for range c.readers {
		if err := b.pool.start(ctx, a, "read", b.fs.reader); err != nil {
			return err
		}
	}
	for range c.spinners {
		if err := b.pool.start(ctx, a, "spin", "-"); err != nil {
			return err
		}
	}
	if r == 0 && len(b.pool.workers) > 0 {
		b.env.Applied[a.name] = applied(b.pool.workers[len(b.pool.workers)-1].cmd.Process.Pid)
	}
	return nil
}

// stopLoad kills the arm's workers and clears what they wrote.
func (b *bench) stopLoad() error {
	err := b.pool.stopAll()
	if b.fs == nil {
		return err
	}
	return errors.Join(err, b.fs.clearWriters(b.cfg.writers))
}

// runJob runs one worker to its end at arm a's tier and returns its wall time
// from start to exit. Ctrl-C kills it.
func (p *pool) runJob(ctx context.Context, a arm, mode string, args ...string) (time.Duration, error) {
	cmd := p.command(a, mode, args...)
	start := time.Now()
	w, readyR, err := p.launch(cmd, a, mode)
	if err != nil {
		return 0, err
	}
	readyR.Close() // a job reports nothing before it ends
	stop := context.AfterFunc(ctx, func() { _ = killWorker(cmd.Process.Pid) })
	err = cmd.Wait()
	took := time.Since(start)
	stop()
	w.life.Close()
	p.workers = slices.DeleteFunc(p.workers, func(x *worker) bool { return x == w })
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("%s worker: %v %s", mode, err, w.stderr)
	}
	return took, nil
}
