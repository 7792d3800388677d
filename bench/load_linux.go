package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// startLoad starts the arm's workers, I/O workers first and spinners last, so
// no worker has to fork beside a full set of spinners (a SCHED_IDLE fork
// beside busy loops can wait for seconds: sched(7), SCHED_IDLE runs only
// when nothing else can).
func (b *bench) startLoad(ctx context.Context, a arm) error {
	if b.pool.cg != nil {
		// Every arm, idle too: an exploration arm's knob must not carry
		// into the next window, whatever the round's order.
		if err := b.pool.cg.prepare(a); err != nil {
			return err
		}
	}
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
	for range c.spinnersFor(a) {
		if err := b.pool.start(ctx, a, "spin", "-"); err != nil {
			return err
		}
	}
	if b.pool.cg != nil {
		return b.pool.cg.afterStart(a, b.pool.workers[0].cmd.Process.Pid)
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

// snap reads the machine's counters, the bench's and its workers' CPU
// time, and the workers' progress. What cannot be read (PSI hidden or
// absent) is noted once in the header instead of failing the run.
func (b *bench) snap() (snapshot, error) {
	s := snapshot{at: monoNow(), progress: map[string][2]uint64{}}
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	line, _, _ := strings.Cut(string(st), "\n")
	if s.cpu, err = parseCPUFields(line); err != nil {
		return s, err
	}
	pids := []string{"self"}
	for _, w := range b.pool.workers {
		pids = append(pids, strconv.Itoa(w.cmd.Process.Pid))
		if w.ctr != nil {
			ops, n := w.ctr.load()
			p := s.progress[w.mode]
			s.progress[w.mode] = [2]uint64{p[0] + ops, p[1] + n}
		}
	}
	for _, pid := range pids {
		t, err := procCPU(pid)
		if err != nil {
			return s, fmt.Errorf("CPU time of %s: %w", pid, err)
		}
		s.own += t
		if pid == "self" {
			s.app = t
		}
	}
	s.psi, err = readPSI()
	s.psiOK = err == nil
	if err != nil {
		b.degrade("PSI (/proc/pressure): " + err.Error())
	}
	return s, nil
}

// degrade records, once, something the run could not measure and why.
func (b *bench) degrade(why string) {
	for _, d := range b.env.Degraded {
		if d == why {
			return
		}
	}
	b.env.Degraded = append(b.env.Degraded, why)
}
