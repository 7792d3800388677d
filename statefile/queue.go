package statefile

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/offmain/offmain/internal/oneline"
)

type opKind uint8

const (
	opNone   opKind = iota
	opSave          // write slot's value
	opRemove        // the "nil" save: delete the file
	opUpdate        // apply the slot's changes to the current value (update.go)
)

// queue is one path's serial writer state. At most one worker runs a
// queue's step at a time (scheduled says a worker holds it or it is on the
// ready list), which is what makes saves to one path serial.
type queue struct {
	s    *Store
	path string
	slot pendingSlot // the typed value holder, fixed at the first Open

	mu         sync.Mutex    // protects the fields below and slot's pending value
	pend       opKind        // the newest queued op not yet started
	queuedAt   time.Time     // when pend became non-empty (tracing only)
	superseded int           // queued ops that pend replaced before they ran
	seq        uint64        // ops queued so far
	done       uint64        // ops finished (written, failed or superseded)
	reads      []*readReq    // Loads waiting, in seq order
	sweep      bool          // crash leftovers not yet swept
	scheduled  bool          // on the ready list or held by a worker
	progress   chan struct{} // closed when an attempt finishes; made by waiters

	// Failures and their retries (retry.go).
	failed     error       // the error of the newest attempt that finished: nil once one succeeded
	retry      retryMode   // who tries the failed op again: nobody, a Flush, or also the backoff timer
	retryNow   bool        // a Flush or the timer asked for a retry: the next step runs it
	retryTimer *time.Timer // the backoff timer, while armed
	retryGen   uint64      // bumped by each arm and stop, so a timer that fired late does nothing
	started    uint64      // attempts (ops and retries) started so far
	finished   uint64      // the number of the newest attempt that finished
	failRun    int         // attempts in a row that failed, for the backoff
	owed       bool        // writer only: OnError heard of a failure since the last success
	owedText   string      // writer only: that failure's text, so a retry failing the same way is not reported again
	keptValue  error       // writer only: the error of an Update's fn that failed in the kept op, which its retry keeps
	noting     bool        // finish is calling OnRecovered: other goroutines' Flushes wait for it
	retryEnd   bool        // Close is done with the path: no retry writes it any more (see Store.Close)

	// Watches and Exclusive (watch.go, lock.go).
	subs        []subscriber // the path's watches; guarded by mu
	checkQueued bool         // a watch check is in reads and not started; guarded by mu
	known       knownState   // writer only: the states a watch check takes as not news
	lock        *fileLock    // Exclusive: the path's lock; set before q is published

	last           lastWrite // writer only: this Store's last write to path (unchanged.go)
	corruptInPlace bool      // writer only: unparsable bytes nobody moved aside are at path (a failed move, or a watch's check)

	// Unparsable bytes a watch's check found (watchcheck.go).
	bad     seen        // writer only: their content...
	badSeen bool        // writer only: ...when set
	badAt   time.Time   // writer only: when a check first found them
	recheck *time.Timer // the check armed for corruptQuiet after badAt; guarded by mu
}

// readReq is a Load (or a watch check) waiting for the saves queued before it.
type readReq struct {
	target uint64
	run    func() // reads, decodes and replies; runs on the writer
}

// op is one save or remove taken off a queue by its writer, or the retry
// of one that failed.
type op struct {
	kind       opKind
	seq        uint64 // the newest op it carries; 0 for a retry
	attempt    uint64 // its number among the queue's attempts (started)
	retry      bool   // it runs again an op that failed (its value is the slot's kept one)
	queued     time.Duration
	superseded int
}

func newQueue(s *Store, path string, sl pendingSlot) *queue {
	return &queue{s: s, path: path, slot: sl, sweep: true, scheduled: true}
}

// enqueue records a new pending op. It must be called with q.mu held. It
// returns true when the caller must schedule q (after unlocking).
func (q *queue) enqueue(k opKind) bool {
	if q.pend != opNone {
		q.superseded++
	} else if q.s.tracing.Load() {
		q.queuedAt = time.Now()
	}
	q.pend = k
	q.seq++
	return q.markScheduled()
}

func (q *queue) markScheduled() bool {
	if q.scheduled {
		return false
	}
	q.scheduled = true
	return true
}

// flushMark is what a Flush notes about a queue when it starts: the op it
// waits for, and the attempts started by then (a failure is tried again
// by one that starts later).
type flushMark struct {
	target, started uint64
}

func (q *queue) mark() flushMark {
	q.mu.Lock()
	defer q.mu.Unlock()
	return flushMark{target: q.seq, started: q.started}
}

// step runs one unit of q's work on a writer: the sweep, the Loads whose
// saves are done, or the pending op. It reports whether q may have more.
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
	case q.retryNow && q.retry == retryNone:
		// The attempt in flight when the retry was asked for ended in a
		// failure no retry fixes (an Update's fn), or in a success: there
		// is nothing kept to write, and the path's state stands.
		q.retryNow = false
		if q.progress != nil { // Close's waitIdle may wait for it
			close(q.progress)
			q.progress = nil
		}
		q.mu.Unlock()
	case q.retryNow:
		o := q.takeRetry()
		q.mu.Unlock()
		q.finish(o, q.runOp(&o))
	default:
		q.scheduled = false
		q.mu.Unlock()
		q.releaseIfDrained()
		return false
	}
	return true
}

// takeReads removes the Loads whose target is done. q.mu is held.
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
	q.started++
	o.attempt = q.started
	q.retryNow = false
	q.stopRetryLocked()
	return o
}

// finish records the end of attempt o: it reports a failure (or the
// success after one), keeps the op's value for a retry when one can help,
// and wakes the Flushes waiting for it.
//
// OnError is called before the attempt counts as done, so a Flush from it
// reports its own path as ErrReentrant, as from Trace or MarshalJSON.
// OnRecovered is called once the path's state says the attempt succeeded,
// so a Flush from it reports the path drained, which is what OnRecovered
// tells the app. Flushes on other goroutines wait for the callback either
// way (noting), so when a Flush returns, OnError has heard of the failure
// it reports and OnRecovered of the success.
func (q *queue) finish(o op, res result) {
	inherited := o.retry && q.keptValue != nil
	if inherited {
		// The kept op's fn failed before its write did: that error stays
		// until a newer op of the path succeeds (see File.Update).
		res.value = q.keptValue
		res.err = oneline.Join(q.keptValue, res.write)
	}
	mode := retryModeOf(res)
	q.slot.settle(mode != retryNone, o.kind)
	q.keptValue = nil
	if mode != retryNone {
		q.keptValue = res.value
	}
	if res.err != nil {
		q.noteOutcome(o, res, inherited)
	}
	q.mu.Lock()
	if !o.retry {
		q.done = o.seq
	}
	q.finished = o.attempt
	q.failed = res.err // a success supersedes an earlier failure: the newest state is on disk
	q.retry = mode
	if res.err == nil {
		q.failRun = 0
		q.noting = true
		q.mu.Unlock()
		q.noteOutcome(o, res, inherited)
		q.mu.Lock()
		q.noting = false
	} else {
		q.failRun++
	}
	q.armRetryLocked()
	if q.progress != nil {
		close(q.progress)
		q.progress = nil
	}
	q.mu.Unlock()
}

// wait blocks until the ops up to target are done or ctx ends, and reports
// whether they were done. own says the caller is q's writer, inside
// OnRecovered of the attempt that finish is reporting: it does not wait
// for that callback to return.
func (q *queue) wait(ctx context.Context, target uint64, own bool) bool {
	for {
		q.mu.Lock()
		if q.done >= target && (own || !q.noting) {
			q.mu.Unlock()
			return true
		}
		if q.progress == nil {
			q.progress = make(chan struct{})
		}
		ch := q.progress
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

// addFailed records a path whose newest state is not on disk, and why.
func (nd *NotDrainedError) addFailed(path string, err error) {
	if nd.Failed == nil {
		nd.Failed = make(map[string]error)
	}
	nd.Failed[path] = err
}

// flushOne waits, for a Flush that took m, until q's ops up to m are done,
// and records in nd what did not drain or failed. w is the writer the
// Flush runs on, or nil: a writer cannot wait for its own path's pending
// ops, nor for a path whose writer waits for it (reentry.go).
//
// Once they are done, a path whose newest op failed is tried again at
// once, unless an attempt started since the Flush began (see retried), and
// is reported only if that attempt failed too. On the path's own writer
// no retry can run: the failure is reported as it stands.
func (s *Store) flushOne(ctx context.Context, nd *NotDrainedError, q *queue, m flushMark, w *worker) {
	own := false
	switch {
	case w == nil:
	case w.q == q:
		if !q.doneUpTo(m.target) {
			nd.addPending(q.path, ErrReentrant)
			return
		}
		own = true
	default:
		if err := s.park(w, q); err != nil {
			nd.addPending(q.path, err)
			return
		}
		defer s.unpark(w)
	}
	if !q.wait(ctx, m.target, own) {
		nd.addPending(q.path, ctx.Err())
		return
	}
	err, ok := q.retried(ctx, m, !own)
	switch {
	case !ok:
		nd.addPending(q.path, ctx.Err())
	case err != nil:
		nd.addFailed(q.path, err)
	}
}

func (q *queue) doneUpTo(target uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.done >= target
}

// addPending records a path that did not drain, and why. A path is listed
// once (Close may find it pending in its watch and in its queue).
func (nd *NotDrainedError) addPending(path string, why error) {
	if !slices.Contains(nd.Pending, path) {
		nd.Pending = append(nd.Pending, path)
	}
	switch {
	case nd.Err == nil:
		nd.Err = why
	case !errors.Is(nd.Err, why):
		nd.Err = oneline.Join(nd.Err, why)
	}
}
