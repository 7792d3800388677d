//go:build linux

package qos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A pacer is the one writer of autogroup nice values in a process: the
// write Start tries while a traced child waits at its exec (now), and the
// writes queued for later (add), in the order they came, on one goroutine
// that exists only while there is work. Without CAP_SYS_ADMIN the kernel
// takes one autogroup write per HZ/10 for the whole system and answers
// EAGAIN before that (kernel/sched/autogroup.c,
// proc_sched_autogroup_set_nice), so once it has refused one, writes are
// spaced by gap: a burst of starts (a window restoring twenty terminal
// tabs) is a queue, not a race of retries. It also keeps what Inspect
// shows of each child's steps after start.
type pacer struct {
	// Set by newPacer; a test replaces them before any work is queued.
	write  func(*session) error
	gap    time.Duration // HZ/10 and a margin: the kernel's window
	poll   time.Duration // next try while another process holds the window
	budget time.Duration // how long one write may keep meeting EAGAIN

	mu      sync.Mutex // protects the fields below, and is held across each write
	queue   []*session
	running bool
	done    chan struct{} // closed when the running goroutine ends
	kick    chan struct{} // buffer 1: work arrived while the goroutine waits
	status  statusTable
	last    time.Time // when the last write landed
	limited bool      // a write met EAGAIN: this process is rate limited
	starved bool      // a write used its whole budget: another process holds every window
}

func newPacer() *pacer {
	return &pacer{
		write:  (*session).write,
		gap:    100*time.Millisecond + 2*time.Millisecond,
		poll:   10 * time.Millisecond,
		budget: 10 * time.Second,
		kick:   make(chan struct{}, 1),
	}
}

// autogroups is the process's pacer.
var autogroups = newPacer()

// now writes s at once unless this process is rate limited and its window
// has not passed, and returns the write's error: EAGAIN means the caller
// may add s to the queue.
func (p *pacer) now(s *session) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limited && time.Until(p.last.Add(p.gap)) > 0 {
		return unix.EAGAIN
	}
	err := p.write(s)
	switch {
	case err == nil:
		p.last = time.Now()
	case errors.Is(err, unix.EAGAIN):
		p.limited = true
	}
	return err
}

// add queues s and starts the goroutine if none runs.
func (p *pacer) add(s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status.add(s.pid, s.start, s.step())
	p.queue = append(p.queue, s)
	if p.running {
		select {
		case p.kick <- struct{}{}:
		default:
		}
		return
	}
	p.running, p.done = true, make(chan struct{})
	go p.run()
}

// run is the pacer's goroutine: it ends when the queue is empty.
func (p *pacer) run() {
	for {
		wait, failed, more := p.next()
		if !more {
			return
		}
		if failed != nil {
			failed() // outside the lock: OnError may call Inspect
		}
		if wait > 0 {
			p.sleep(wait)
		}
	}
}

// next tries the head of the queue and returns how long to wait before the
// next try, and the report of a write that failed, if any; more is false,
// and the goroutine marked ended, once the queue is empty.
func (p *pacer) next() (wait time.Duration, failed func(), more bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		p.running = false
		close(p.done)
		return 0, nil, false
	}
	s := p.queue[0]
	if wait := time.Until(p.last.Add(p.gap)); p.limited && wait > 0 {
		return wait, nil, true
	}
	err := p.write(s)
	now := time.Now()
	if !errors.Is(err, unix.EAGAIN) {
		if err == nil {
			p.last, p.starved = now, false
		}
		return 0, p.finish(err), true
	}
	// Refused: this process or another wrote less than HZ/10 ago.
	p.limited = true
	if s.refused.IsZero() {
		s.refused = now
	}
	// Once one write used its whole budget, the next ones get one more
	// window each, not a budget each: twenty queued tabs fail in seconds,
	// not in twenty budgets, while the other writer keeps every window.
	budget := p.budget
	if p.starved {
		budget = 2 * p.gap
	}
	if now.Sub(s.refused) >= budget {
		p.starved = true
		return 0, p.finish(errRateLimit{err, budget}), true
	}
	if wait := p.last.Add(p.gap).Sub(now); wait > 0 {
		return wait, nil, true // our own last write holds the window
	}
	return p.poll, nil, true
}

// finish removes the head of the queue, records its outcome and returns
// the report of a failure, if any, for the goroutine to call without p.mu.
func (p *pacer) finish(err error) func() {
	s := p.queue[0]
	p.queue[0] = nil // the queue's array must not keep s (and its report) alive
	if p.queue = p.queue[1:]; len(p.queue) == 0 {
		p.queue = nil
	}
	var serr error
	if err != nil {
		serr = &stepError{path: s.path, pid: s.pid, step: s.step(), err: err}
	}
	p.status.done(p.status.add(s.pid, s.start), s.step(), serr)
	s.err = serr
	close(s.done)
	if serr == nil || s.report == nil {
		return nil
	}
	return func() { s.report(serr) }
}

// sleep waits for d, or less if new work arrives.
func (p *pacer) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.kick:
	}
}

// wait returns once nothing is queued, or with ctx's error.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	running, done := p.running, p.done
	p.mu.Unlock()
	if !running {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fail records a step that failed for process pid, started at start, for
// Inspect.
func (p *pacer) fail(pid int, start uint64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status.fail(pid, start, err)
}

// lookup returns what Inspect shows of process pid's steps.
func (p *pacer) lookup(pid int, start uint64) (pending []string, failed error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status.lookup(pid, start)
}

// errRateLimit is the error of an autogroup write the kernel's rate limit
// kept refusing for the pacer's whole budget: another process writes
// autogroups without pause.
type errRateLimit struct {
	err    error
	budget time.Duration
}

func (e errRateLimit) Error() string {
	return fmt.Sprintf("refused by the kernel's rate limit (one write per 100 ms system-wide) for %v: %v", e.budget, e.err)
}

func (e errRateLimit) Unwrap() error { return e.err }
