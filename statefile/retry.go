package statefile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Retries. A save or remove that failed is kept, value and all, until it
// lands or a newer op of the path replaces it: a disk that was full for a
// moment (a download, a build, a small tmpfs home) must not cost what the
// person typed. It is tried again by a backoff timer while the app runs,
// and at once by every Flush and Close, so the quit flush writes what a
// freed disk takes now. The timer is a time.AfterFunc, armed only while a
// failure waits: no goroutine waits for it, and an idle Store still runs
// none.

// retryMode says who tries a failed op again.
type retryMode uint8

const (
	retryNone    retryMode = iota // nothing to retry: it succeeded, or running it again gives the same error
	retryOnFlush                  // Flush and Close only: the error stays until a person or another program acts (ErrNewerVersion)
	retryBackoff                  // the timer too: a disk error, which may pass on its own
)

// The backoff: the first retry a second after the failure, each next one
// twice as late, up to retryMax between two. On a disk that stays full a
// failed path so costs one attempt (a temp file created, written until
// ENOSPC, removed) every 30 s once the first few passed, and OnError hears
// of it once, not at each retry.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// retryDelay is the wait before the retry after fails failures in a row.
func retryDelay(fails int) time.Duration {
	if fails < 1 {
		fails = 1
	}
	return min(retryFirst<<min(fails-1, 5), retryMax)
}

// result is what an attempt ended with: err is what OnError and Flush
// get (an Update's failed fn joined with the write's error); write is the
// part that a retry may fix, nil when the write itself worked or none was
// due; value is the part no retry fixes, the error of an Update's fn that
// was the newest change of the batch.
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

// unlockedRetry is the result of a retry asked for once Close was done
// with the path (see Store.Close): the kept op is dropped, never written,
// and the path stays failed. With Options.Exclusive the lock is released
// then, and another Store may hold it by now; without it, a Flush after
// Close still tries once more. retryEnd is set under q.mu by Close, and a
// retry's attempt is counted (takeRetry) under q.mu too, so Close either
// sees this attempt and waits for it, or this attempt sees retryEnd.
func (q *queue) unlockedRetry() (result, bool) {
	q.mu.Lock()
	end, prev := q.retryEnd, q.failed
	q.mu.Unlock()
	if !end {
		return result{}, false
	}
	return failedWith(&finalError{fmt.Errorf("statefile: %s: not tried again after Close released its lock: %w", q.path, prev)}), true
}

// takeRetry starts the retry of the failed op; q.mu is held.
func (q *queue) takeRetry() op {
	q.retryNow = false
	q.stopRetryLocked()
	q.started++
	return op{retry: true, attempt: q.started}
}

// armRetryLocked arms the backoff timer for a failure that the timer
// retries; q.mu is held. A closed Store arms none: after Close, only a
// Flush tries again.
func (q *queue) armRetryLocked() {
	q.stopRetryLocked()
	if q.retry != retryBackoff || q.s.closed.Load() {
		return
	}
	gen := q.retryGen
	q.retryTimer = time.AfterFunc(retryDelay(q.failRun), func() { q.retryDue(gen) })
}

// stopRetryLocked stops the backoff timer; q.mu is held.
func (q *queue) stopRetryLocked() {
	q.retryGen++
	if q.retryTimer != nil {
		q.retryTimer.Stop()
		q.retryTimer = nil
	}
}

// retryDue runs on the timer's goroutine: it has the writer run the retry,
// unless the timer was stopped or re-armed since.
func (q *queue) retryDue(gen uint64) {
	q.mu.Lock()
	if gen != q.retryGen || q.retry != retryBackoff || q.s.closed.Load() {
		q.mu.Unlock()
		return
	}
	q.retryTimer = nil
	q.retryNow = true
	start := q.markScheduled()
	q.mu.Unlock()
	if start {
		q.s.schedule(q)
	}
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
		if q.settledLocked(m, canRetry) {
			err := q.failed
			q.mu.Unlock()
			return err, true
		}
		start := false
		if q.started <= m.started && !q.retryNow {
			q.retryNow = true
			start = q.markScheduled()
		}
		if q.progress == nil {
			q.progress = make(chan struct{})
		}
		ch := q.progress
		q.mu.Unlock()
		if start {
			q.s.schedule(q)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.settledLocked(m, canRetry) {
				return q.failed, true
			}
			return nil, false
		}
	}
}

// settledLocked reports whether q's failure, if any, is final for a Flush
// that took m: none, not to be retried, or met by an attempt that started
// after m, and OnRecovered heard of it; q.mu is held.
func (q *queue) settledLocked(m flushMark, canRetry bool) bool {
	if !canRetry {
		return true // the writer itself: the state as it stands
	}
	if q.noting {
		return false // OnRecovered of the newest attempt is still running
	}
	return q.failed == nil || q.retry == retryNone || q.finished > m.started
}

// noteOutcome tells OnError and Logger of a failed attempt, and
// OnRecovered of the first success after one. A retry that fails with the
// text OnError last got is not reported again: on a disk that stays full,
// the app hears of the failure once, not every 30 s. Nor is a retry whose
// write landed and whose only error is the kept Update fn's, which OnError
// got with the write's first failure (inherited). It runs on the writer, before the
// attempt counts as done for other goroutines (see finish).
func (q *queue) noteOutcome(o op, res result, inherited bool) {
	err := res.err
	if err == nil {
		if q.owed {
			q.owed, q.owedText = false, ""
			q.s.recovered(q.path)
		}
		return
	}
	text := err.Error()
	if o.retry && q.owed && (text == q.owedText || inherited && res.write == nil) {
		return
	}
	q.report(err)
	q.owedText = text
}

// report hands a failure of the path to OnError and Logger, and notes that
// the next success is news (OnRecovered). It runs on the writer.
func (q *queue) report(err error) {
	q.owed = true
	q.s.report(q.path, err)
}

// recovered tells OnRecovered and Logger that path's newest state reached
// the disk after a failure that OnError heard of.
func (s *Store) recovered(path string) {
	if s.opts.OnRecovered != nil {
		s.opts.OnRecovered(path)
	}
	if s.log != nil {
		s.log.Info("statefile: saved again after a failure", slog.String("path", path))
	}
}

// stopRetries stops every backoff timer (Close): a closed Store starts no
// writer on its own.
func (s *Store) stopRetries() {
	s.mu.Lock()
	qs := make([]*queue, 0, len(s.files))
	for _, q := range s.files {
		qs = append(qs, q)
	}
	s.mu.Unlock()
	for _, q := range qs {
		q.mu.Lock()
		q.stopRetryLocked()
		q.mu.Unlock()
	}
}
