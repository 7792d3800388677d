package statefile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/offmain/offmain/internal/backoff"
	"github.com/offmain/offmain/internal/oneline"
)

// Retries. A save or remove that failed is kept, value and all, until it
// lands or a newer op of the path replaces it: a disk that was full for a
// moment (a download, a build, a small tmpfs home) must not cost what the
// person typed. It is tried again by a backoff timer while the app runs,
// and at once by every Flush and Close, so the quit flush writes what a
// freed disk takes now. The timer is a time.AfterFunc, armed only while a
// failure waits: no goroutine waits for it, and an idle Store still runs
// none.

// retryState is a path's failures and their retries. The fields marked
// writer only are the writer's; the others are guarded by the queue's mu.
type retryState struct {
	failed   error         // the error of the newest attempt that finished: nil once one succeeded
	mode     retryMode     // who tries the failed op again
	asked    bool          // a Flush or the timer asked for a retry: the writer's next step runs it
	timer    backoff.Timer // the wait before the next retry by the timer
	started  uint64        // attempts (ops and retries) started so far
	finished uint64        // the number of the newest attempt that finished
	noting   bool          // finish is calling OnRecovered: other goroutines' Flushes wait for it
	checks   int           // Flushes' checks of the file in progress (flush.go): each may write it
	reading  *fileRead     // a Flush's read of the file in flight, which other Flushes join (flush.go)
	next     *fileRead     // a read queued behind it, for Flushes that cannot use it (flush.go)
	reads    uint64        // Flushes' reads of the file made so far, to number them
	ended    bool          // Close is done with the path: no retry or check writes it any more (see Store.Close)

	kept     error  // writer only: the error of an Update's fn that failed in the kept op, which its retry keeps
	owed     bool   // writer only: OnError heard of a failure since the last success
	owedText string // writer only: that failure's text, so a retry failing the same way is not reported again
}

// retryMode says who tries a failed op again.
type retryMode uint8

const (
	retryNone    retryMode = iota // nothing to retry: it succeeded, or running it again gives the same error
	retryOnFlush                  // Flush and Close only: the error stays until a person or another program acts (ErrNewerVersion)
	retryBackoff                  // the timer too: a disk error, which may pass on its own
)

// The backoff of the retry timer: the first retry a second after the
// failure, each next one twice as late, up to 30 s between two. On a disk
// that stays full a failed path so costs one attempt (a temp file created,
// written until ENOSPC, removed) every 30 s once the first few passed, and
// OnError hears of it once, not at each retry.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

func newRetryState() retryState {
	return retryState{timer: backoff.Timer{First: retryFirst, Max: retryMax}}
}

// start counts an attempt that starts now, which answers any retry asked
// for. q.mu is held.
func (r *retryState) start() uint64 {
	r.asked = false
	r.timer.Stop()
	r.started++
	return r.started
}

// result is what an attempt ended with: err is what OnError and Flush get
// (an Update's failed fn joined with the write's error); write is the part
// that a retry may fix, nil when the write itself worked or none was due;
// value is the part no retry fixes, the error of an Update's fn that was
// the newest change of the batch.
type result struct {
	err, write, value error
}

func failedWith(err error) result { return result{err: err, write: err} }

// finalError is an error that a retry cannot fix: one of the value itself
// (its encoding, its "version" member), which running the op again gives
// again, or a retry the Store may no longer make. Its text and what it
// unwraps are the original error's.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

// retryModeOf classifies an attempt's result.
func retryModeOf(res result) retryMode {
	var fe *finalError
	switch {
	case res.write == nil, errors.As(res.write, &fe):
		return retryNone
	case errors.Is(res.write, ErrNewerVersion):
		// Waiting does not make the file older: only a person, or the
		// newer release itself, can. The timer would only read it every
		// 30 s; a Flush (at quit, say) still checks once more.
		return retryOnFlush
	}
	return retryBackoff
}

// takeRetry starts the retry asked for; q.mu is held. It returns false
// when there is nothing to retry (the attempt in flight when the retry was
// asked for succeeded, or failed in a way no retry fixes): the path's state
// stands, and the waiters are woken.
func (q *queue) takeRetry() (op, bool) {
	if q.retry.mode == retryNone {
		q.retry.asked = false
		q.wake() // Close's waitIdle may wait for it
		return op{}, false
	}
	return op{retry: true, attempt: q.retry.start()}, true
}

// finish records the end of attempt o: it reports a failure (or the
// success after one), keeps the op's value for a retry when one can help,
// and wakes the Flushes waiting for it.
//
// OnError is called before the attempt counts as done, so a Flush from it
// reports its own path as reentrant, as from Trace or MarshalJSON.
// OnRecovered is called once the path's state says the attempt succeeded,
// so a Flush from it reports the path drained, which is what OnRecovered
// tells the app. Flushes on other goroutines wait for the callback either
// way (noting), so when a Flush returns, OnError has heard of the failure
// it reports and OnRecovered of the success.
func (q *queue) finish(o op, res result) {
	r := &q.retry
	inherited := o.retry && r.kept != nil
	if inherited {
		// The kept op's fn failed before its write did: that error stays
		// until a newer op of the path succeeds (see File.Update).
		res.value = r.kept
		res.err = oneline.Join(r.kept, res.write)
	}
	mode := retryModeOf(res)
	q.slot.endAttempt(mode != retryNone, o.kind)
	r.kept = nil
	if mode != retryNone {
		r.kept = res.value
	}
	if res.err != nil {
		q.noteOutcome(o, res, inherited)
	}
	q.mu.Lock()
	if !o.retry {
		q.done = o.seq
	}
	r.finished = o.attempt
	r.failed = res.err // a success supersedes an earlier failure: the newest state is on disk
	r.mode = mode
	if res.err == nil {
		r.timer.Succeeded()
		r.noting = true
		q.mu.Unlock()
		q.noteOutcome(o, res, inherited)
		q.mu.Lock()
		r.noting = false
	} else {
		r.timer.Failed()
	}
	q.armRetryLocked()
	q.wake()
	q.mu.Unlock()
}

// armRetryLocked arms the backoff timer for a failure that the timer
// retries; q.mu is held. A closed Store arms none: after Close, only a
// Flush tries again.
func (q *queue) armRetryLocked() {
	q.retry.timer.Stop()
	if q.retry.mode != retryBackoff || q.s.closed.Load() {
		return
	}
	q.retry.timer.Arm(&q.mu, func() {
		if q.retry.mode != retryBackoff || q.s.closed.Load() {
			return
		}
		q.retry.asked = true
		if q.markRunning() {
			q.s.start(q)
		}
	})
}

// unlockedRetry is the result of a retry asked for once Close was done
// with the path (see Store.Close): the kept op is dropped, never written,
// and the path stays failed. With Options.Exclusive the lock is released
// then, and another Store may hold it by now; without it, a Flush after
// Close still tries once more. ended is set under q.mu by Close, and a
// retry's attempt is counted (takeRetry) under q.mu too, so Close either
// sees this attempt and waits for it, or this attempt sees ended.
func (q *queue) unlockedRetry() (result, bool) {
	q.mu.Lock()
	end, prev := q.retry.ended, q.retry.failed
	q.mu.Unlock()
	if !end {
		return result{}, false
	}
	return failedWith(&finalError{fmt.Errorf("statefile: %s: not tried again after Close released its lock: %w", q.path, prev)}), true
}

// retried is the end of a Flush's wait for q, once the ops it waits for
// are done: if the path's newest op failed and may be retried, and no
// attempt started since the Flush took m, it has the writer try again now
// and waits for that attempt. It returns the failure that remains (nil
// when the path's newest state is on disk), and false if ctx ended first.
// canRetry is false on the path's own writer, which cannot run a retry
// while it waits for one.
func (q *queue) retried(ctx context.Context, m flushMark, canRetry bool) (error, bool) {
	for {
		q.mu.Lock()
		if q.finalLocked(m, canRetry) {
			err := q.retry.failed
			q.mu.Unlock()
			return err, true
		}
		if q.retry.started <= m.started && !q.retry.asked {
			q.retry.asked = true
			if q.markRunning() {
				q.s.start(q)
			}
		}
		ch := q.progressLocked()
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.finalLocked(m, canRetry) {
				return q.retry.failed, true
			}
			return nil, false
		}
	}
}

// finalLocked reports whether q's failure, if any, is final for a Flush
// that took m: none, not to be retried, or met by an attempt that started
// after m, and OnRecovered heard of it; q.mu is held.
func (q *queue) finalLocked(m flushMark, canRetry bool) bool {
	r := &q.retry
	if !canRetry {
		return true // the writer itself: the state as it stands
	}
	if r.noting {
		return false // OnRecovered of the newest attempt is still running
	}
	return r.failed == nil || r.mode == retryNone || r.finished > m.started
}

// noteOutcome tells OnError and Logger of a failed attempt, and
// OnRecovered of the first success after one. A retry that fails with the
// text OnError last got is not reported again: on a disk that stays full,
// the app hears of the failure once, not every 30 s. Nor is a retry whose
// write landed and whose only error is the kept Update fn's, which OnError
// got with the write's first failure (inherited). It runs on the writer,
// before the attempt counts as done for other goroutines (see finish).
func (q *queue) noteOutcome(o op, res result, inherited bool) {
	r := &q.retry
	err := res.err
	if err == nil {
		if r.owed {
			r.owed, r.owedText = false, ""
			q.s.recovered(q.path)
		}
		return
	}
	text := err.Error()
	if o.retry && r.owed && (text == r.owedText || inherited && res.write == nil) {
		return
	}
	q.report(err)
	r.owedText = text
}

// report hands a failure of the path to OnError and Logger, and notes that
// the next success is news (OnRecovered). It runs on the writer.
func (q *queue) report(err error) {
	q.retry.owed = true
	q.s.report(q.path, err)
}

// recovered tells OnRecovered and Logger that path's newest state reached
// the disk after a failure that OnError heard of.
func (s *Store) recovered(path string) {
	if s.opts.OnRecovered != nil {
		s.opts.OnRecovered(path)
	}
	s.log.Info("statefile: saved again after a failure", slog.String("path", path))
}

// endRetries is Close's last step for each path, once its flush is done:
// no timer retries any more, an Exclusive path takes no retry at all
// (another Store may hold its lock once it is released), and Close waits,
// until ctx ends, for an attempt still running (a retry that a Flush on
// another goroutine asked for while Close flushed), so nothing of the Store
// writes a path whose lock it released, or writes at all after Close
// returned unless Close gave up on ctx. Then it releases the locks of the
// drained paths; the writers of the others release theirs when they go
// idle (queue.step).
func (s *Store) endRetries(ctx context.Context, nd *NotDrainedError) {
	for _, q := range s.queues() {
		q.mu.Lock()
		q.retry.timer.Stop()
		if q.lock != nil {
			q.retry.ended = true
		}
		q.mu.Unlock()
		if !q.waitIdle(ctx) {
			nd.addPending(q.path, ctx.Err())
		}
		q.releaseIfDrained()
	}
}

// waitIdle waits until no attempt of q runs or is about to, or ctx ends,
// and reports whether q went idle. The ops queued before Close are done by
// now unless Close's flush gave up on ctx, in which case neither waits.
func (q *queue) waitIdle(ctx context.Context) bool {
	for {
		q.mu.Lock()
		if q.idleLocked() {
			q.mu.Unlock()
			return true
		}
		ch := q.progressLocked()
		q.mu.Unlock()
		if !doneOrCtx(ctx, ch) {
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.idleLocked() // it may have gone idle as ctx ended
		}
	}
}

// idleLocked reports whether no attempt of q runs or is about to; q.mu is
// held.
func (q *queue) idleLocked() bool {
	return q.retry.started == q.retry.finished && !q.retry.asked && !q.retry.noting && q.retry.checks == 0
}
