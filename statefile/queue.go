package statefile

import (
	"context"
	"sync"
	"time"
)

type opKind uint8

const (
	opNone   opKind = iota
	opSave          // write slot's value
	opRemove        // the "nil" save: delete the file
	opUpdate        // apply the slot's changes to the current value (update.go)
)

// queue is one path's serial core: the op waiting to run, the sequence
// numbers that order ops and reads, the reads waiting for them, and
// whether a writer runs it. One writer at a time (running) is what makes
// the path's saves serial. Each feature keeps its state in a struct of the
// file that owns it, hung off the queue.
type queue struct {
	s    *Store
	path string
	slot pendingSlot // the typed value holder, fixed at the first Open

	mu         sync.Mutex    // protects the fields below, slot's pending value, and what retry and watch say it guards
	pend       opKind        // the newest queued op not yet started
	queuedAt   time.Time     // when pend became non-empty (tracing only)
	superseded int           // queued ops that pend replaced before they ran
	seq        uint64        // ops queued so far
	done       uint64        // ops finished (written, failed or superseded)
	reads      []*readReq    // Loads, watch checks and Flush checks waiting, in seq order
	sweep      bool          // crash leftovers not yet swept
	running    bool          // a writer goroutine runs the queue (writer.go)
	progress   chan struct{} // closed when an attempt finishes; made by waiters

	retry retryState // failures and their retries (retry.go)
	watch watchState // the path's watches (watch.go, watchcheck.go)
	disk  diskState  // what the file holds, as far as the writer knows (disk.go); writer only
	lock  *fileLock  // Options.Exclusive: the path's lock (lock.go); set before the queue is published
}

// readReq is a read (a Load, a watch's check, a Flush's check of the
// file) waiting for the ops queued before it.
type readReq struct {
	target uint64
	run    func() // reads and replies; runs on the writer
}

// op is one save or remove taken off a queue by its writer, or the retry
// of one that failed.
type op struct {
	kind       opKind
	seq        uint64 // the newest op it carries; 0 for a retry
	attempt    uint64 // its number among the queue's attempts (retry.started)
	retry      bool   // it runs again an op that failed (its value is the slot's kept one)
	queued     time.Duration
	superseded int
}

// newQueue returns the queue of a path just opened, with its sweep queued
// and marked running: the caller starts its writer.
func newQueue(s *Store, path string, sl pendingSlot) *queue {
	return &queue{s: s, path: path, slot: sl, sweep: true, running: true, retry: newRetryState()}
}

// enqueue records a new pending op. It must be called with q.mu held, and
// the caller starts a writer (s.start) when it returns true.
func (q *queue) enqueue(k opKind) bool {
	if q.pend != opNone {
		q.superseded++
	} else if q.s.tracing.Load() {
		q.queuedAt = time.Now()
	}
	q.pend = k
	q.seq++
	return q.markRunning()
}

// markRunning notes that a writer runs q and reports whether none did, so
// that the caller starts one (after unlocking q.mu, or with it held: start
// takes no lock). q.mu is held.
func (q *queue) markRunning() bool {
	if q.running {
		return false
	}
	q.running = true
	return true
}

// addRead queues r behind the ops queued so far and returns whether a
// writer must be started.
func (q *queue) addRead(run func()) (*readReq, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := &readReq{target: q.seq, run: run}
	q.reads = append(q.reads, r)
	return r, q.markRunning()
}

// flushMark is what a Flush notes about a queue when it starts: the op it
// waits for, and the attempts started by then (a failure is tried again
// by one that starts later).
type flushMark struct {
	target, started uint64
	reads           uint64 // the Flushes' reads of the file made before it (flush.go)
}

func (q *queue) mark() flushMark {
	q.mu.Lock()
	defer q.mu.Unlock()
	return flushMark{target: q.seq, started: q.retry.started, reads: q.retry.reads}
}

// step runs one unit of q's work on its writer: the sweep, the reads whose
// ops are done, the pending op, or a retry. It reports whether q may have
// more; when it has none, the writer ends.
func (q *queue) step() bool {
	q.mu.Lock()
	switch {
	case q.sweep:
		q.sweep = false
		q.mu.Unlock()
		q.s.sweepTemps(q.path)
	case len(q.reads) > 0 && q.reads[0].target <= q.done:
		reads := q.takeReads()
		q.mu.Unlock()
		for _, r := range reads {
			r.run()
		}
	case q.pend != opNone:
		o := q.take()
		q.mu.Unlock()
		q.finish(o, q.runOp(&o))
	case q.retry.asked:
		o, ok := q.takeRetry()
		q.mu.Unlock()
		if ok {
			q.finish(o, q.runOp(&o))
		}
	default:
		q.running = false
		q.mu.Unlock()
		q.releaseIfDrained()
		return false
	}
	return true
}

// takeReads removes the reads whose target is done. q.mu is held.
func (q *queue) takeReads() []*readReq {
	n := 0
	for n < len(q.reads) && q.reads[n].target <= q.done {
		n++
	}
	reads := q.reads[:n:n]
	q.reads = append([]*readReq(nil), q.reads[n:]...)
	return reads
}

// take moves the pending op to the writer. q.mu is held. The op replaces
// a failed one waiting for its retry.
func (q *queue) take() op {
	o := op{kind: q.pend, seq: q.seq, superseded: q.superseded}
	if !q.queuedAt.IsZero() {
		o.queued = time.Since(q.queuedAt)
		q.queuedAt = time.Time{}
	}
	q.slot.takeValue()
	q.pend, q.superseded = opNone, 0
	o.attempt = q.retry.start()
	return o
}

// wake wakes the goroutines waiting for an attempt's end. q.mu is held.
func (q *queue) wake() {
	if q.progress != nil {
		close(q.progress)
		q.progress = nil
	}
}

// progressLocked returns the channel the next wake closes. q.mu is held.
func (q *queue) progressLocked() <-chan struct{} {
	if q.progress == nil {
		q.progress = make(chan struct{})
	}
	return q.progress
}

// wait blocks until the ops up to target are done or ctx ends, and reports
// whether they were done. own says the caller is q's writer, inside
// OnRecovered of the attempt that finish is reporting: it does not wait
// for that callback to return.
func (q *queue) wait(ctx context.Context, target uint64, own bool) bool {
	for {
		q.mu.Lock()
		if q.done >= target && (own || !q.retry.noting) {
			q.mu.Unlock()
			return true
		}
		ch := q.progressLocked()
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			q.mu.Lock()
			ok := q.done >= target
			q.mu.Unlock()
			return ok
		}
	}
}

func (q *queue) doneUpTo(target uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.done >= target
}
