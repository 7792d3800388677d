package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// readyTimeout bounds the wait for a worker's "ready" line. A
// SCHED_IDLE fork can starve for seconds beside busy loops (sched(7)); the bench starts the
// spinners last, so a worker should never wait that long here.
const readyTimeout = 60 * time.Second

// worker is one load process; its process group is its own (pgid == pid).
type worker struct {
	mode   string
	ctr    *counters // its progress, mapped; nil when the pool has no counter folder
	cmd    *exec.Cmd
	life   *os.File      // write end of the worker's stdin: closing it tells the worker to exit
	stderr *cappedWriter // the worker's error message, if any
}

// pool owns every worker process of a run. It is used by the run's goroutine
// only; stopAll kills every process group it started.
type pool struct {
	exe     string // this binary (or the test binary, whose TestMain dispatches)
	marker  string // value of runEnv for every worker of this run
	ctrDir  string // where each worker's counters file goes; "" for none
	pace    pace
	cg      *benchCgroup // -cgroup: what the cgroup arms start through; nil without
	started int          // workers started so far, to name counter files
	workers []*worker
}

// command builds the worker command: the bench binary in a hidden mode,
// with its counters file (created here, zeroed) and offered rate.
func (p *pool) command(a arm, mode string, args ...string) (*exec.Cmd, *counters, error) {
	cmd := exec.Command(p.exe, args...)
	cmd.Env = append(os.Environ(), workerEnv+"="+mode, runEnv+"="+p.marker)
	cmd.SysProcAttr = sysProcAttr(a)
	if p.ctrDir == "" {
		return cmd, nil, nil
	}
	p.started++
	path := filepath.Join(p.ctrDir, fmt.Sprintf("%s %d", mode, p.started))
	c, err := openCounters(path, true)
	if err != nil {
		return nil, nil, err
	}
	cmd.Env = append(cmd.Env, countersEnv+"="+path, paceEnv+"="+strconv.FormatFloat(paceFor(p.pace, a).forMode(mode), 'g', -1, 64))
	return cmd, c, nil
}

// start starts one worker at arm a's tier and waits until it reports ready.
func (p *pool) start(ctx context.Context, a arm, mode string, args ...string) error {
	cmd, c, err := p.command(a, mode, args...)
	if err != nil {
		return err
	}
	w, readyR, err := p.launch(cmd, a, mode)
	if err != nil {
		return errors.Join(err, c.close())
	}
	w.ctr = c
	defer readyR.Close()
	if err := readyR.SetReadDeadline(time.Now().Add(readyTimeout)); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = readyR.SetReadDeadline(time.Now()) })
	defer stop()
	line, err := bufio.NewReader(readyR).ReadString('\n')
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || line != "ready\n" {
		return fmt.Errorf("%s worker at arm %s did not start: %v %s", mode, a.name, err, w.stderr)
	}
	return nil
}

// launch starts cmd with the lifeline on stdin and the ready pipe on stdout,
// and records the worker before anything can fail, so stopAll kills it.
func (p *pool) launch(cmd *exec.Cmd, a arm, mode string) (*worker, *os.File, error) {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, nil, err
	}
	w := &worker{mode: mode, cmd: cmd, life: lifeW, stderr: &cappedWriter{max: 4096}}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = lifeR, readyW, w.stderr
	if a.kind == armCgroup {
		err = p.cg.start(cmd, a)
	} else {
		err = startAt(cmd, a)
	}
	lifeR.Close()
	readyW.Close()
	if err != nil {
		lifeW.Close()
		readyR.Close()
		return nil, nil, fmt.Errorf("start %s worker at arm %s: %w", mode, a.name, err)
	}
	p.workers = append(p.workers, w)
	return w, readyR, nil
}

// stopAll kills every worker's process group, reaps the workers, and reports
// any that had exited on its own before (the load it stood for was missing).
func (p *pool) stopAll() error {
	var errs []error
	for _, w := range p.workers {
		errs = append(errs, killWorker(w.cmd.Process.Pid))
	}
	for _, w := range p.workers {
		err := w.cmd.Wait()
		w.life.Close()
		if w.ctr != nil {
			errs = append(errs, w.ctr.close())
		}
		if st := w.cmd.ProcessState; st != nil && st.Exited() {
			errs = append(errs, fmt.Errorf("%s worker (pid %d) exited on its own: %v %s",
				w.mode, st.Pid(), err, w.stderr))
		}
	}
	p.workers = nil
	return errors.Join(errs...)
}

// cappedWriter keeps the first max bytes written to it; safe for the
// goroutine os/exec copies a worker's stderr on.
type cappedWriter struct {
	max int
	mu  sync.Mutex // protects b
	b   strings.Builder
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedWriter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.b.Len() == 0 {
		return ""
	}
	return "(stderr: " + strings.TrimSpace(c.b.String()) + ")"
}
