//go:build linux

package qos

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// pacer applies the follow-ups of every Start in the process, in the order
// the children started, on one goroutine that exists only while there is
// work. Autogroup writes are spaced by gap once the kernel has refused one: without
// CAP_SYS_ADMIN it takes one autogroup write per HZ/10 for the whole system
// and answers EAGAIN before that (kernel/sched/autogroup.c,
// proc_sched_autogroup_set_nice), so a burst of starts (a window restoring
// twenty terminal tabs) is a queue, not a race of retries.
type pacer struct {
	// Set once by newPacer; tests replace it before any work is queued.
	applyAutogroup func(f *followUp) error
	gap            time.Duration // HZ/10 and a margin: the kernel's window
	poll           time.Duration // next try while another process holds the window
	budget         time.Duration // how long one write may keep meeting EAGAIN

	queued atomic.Int64 // follow-ups ever added; tests read it

	mu      sync.Mutex // protects the fields below
	groups  []*followUp
	running bool
	done    chan struct{} // closed when the running goroutine ends
	kick    chan struct{} // buffer 1: work arrived while the goroutine waits
	status  statusTable

	// Owned by the running goroutine.
	last    time.Time // when its last autogroup write landed
	limited bool      // a write met EAGAIN: this process is rate limited
	starved bool      // a write used its whole budget: another process holds every window
}

func newPacer() *pacer {
	return &pacer{
		applyAutogroup: (*followUp).writeAutogroup,
		gap:            100*time.Millisecond + 2*time.Millisecond,
		poll:           10 * time.Millisecond,
		budget:         10 * time.Second,
		kick:           make(chan struct{}, 1),
	}
}

// afterStart is the process's pacer.
var afterStart = newPacer()

// add queues f and starts the goroutine if none runs.
func (p *pacer) add(f *followUp) {
	p.queued.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	f.status = p.status.add(f.child.pid, f.start, f.stepName())
	p.groups = append(p.groups, f)
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
		f := p.head()
		if f == nil {
			if p.retire() {
				return
			}
			continue
		}
		if wait := p.write(f); wait > 0 {
			p.sleep(wait)
		}
	}
}

// head returns the first follow-up queued, or nil.
func (p *pacer) head() *followUp {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.groups) == 0 {
		return nil
	}
	return p.groups[0]
}

// retire marks the goroutine ended if nothing is queued, under the lock add
// checks it with.
func (p *pacer) retire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.groups) > 0 {
		return false
	}
	p.running = false
	close(p.done)
	return true
}

// write tries f's autogroup write and returns how long to wait before the
// next try, or 0 when f is done (applied, dropped or failed).
func (p *pacer) write(f *followUp) time.Duration {
	if wait := time.Until(p.last.Add(p.gap)); p.limited && wait > 0 {
		return wait
	}
	err := p.applyAutogroup(f)
	now := time.Now()
	if !errors.Is(err, unix.EAGAIN) {
		if err == nil {
			p.last, p.starved = now, false
		}
		p.finish(f, err)
		return 0
	}
	// Refused: this process or another wrote less than HZ/10 ago.
	p.limited = true
	if f.refused.IsZero() {
		f.refused = now
	}
	// Once one write used its whole budget, the next ones get one more
	// window each, not a budget each: twenty queued tabs fail in seconds,
	// not in 200 s, while the other writer keeps every window.
	budget := p.budget
	if p.starved {
		budget = 2 * p.gap
	}
	if now.Sub(f.refused) >= budget {
		p.starved = true
		p.finish(f, errRateLimit{err, budget})
		return 0
	}
	if wait := p.last.Add(p.gap).Sub(now); wait > 0 {
		return wait // our own last write holds the window
	}
	return p.poll
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

// finish removes f from the queue and reports err, if any.
func (p *pacer) finish(f *followUp, err error) {
	p.mu.Lock()
	p.groups[0] = nil // the queue's array must not keep f (and its command) alive
	if p.groups = p.groups[1:]; len(p.groups) == 0 {
		p.groups = nil
	}
	var serr *StepError
	if err != nil {
		serr = &StepError{Pid: f.child.pid, Step: f.stepName(), Err: err}
	}
	p.status.done(f.status, f.stepName(), serr)
	p.mu.Unlock()
	f.child.close()
	if serr != nil && f.report != nil {
		f.report(serr)
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

func waitApplied(ctx context.Context) error { return afterStart.wait(ctx) }
