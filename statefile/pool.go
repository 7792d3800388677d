package statefile

import "time"

// The writer pool: a Store runs at most Options.MaxParallel writer
// goroutines, only while work is queued; a writer stuck in one disk step
// stops counting against that limit.

// worker is one writer goroutine's state, guarded by Store.mu.
type worker struct {
	since  time.Time // when its current step began
	goid   uint64    // its goroutine's id (reentry.go); set before it steps, then fixed
	q      *queue    // the queue whose step it runs; set with since
	waitOn *queue    // the queue a Load or Flush inside its step waits for, or nil
}

// stuckAfter is how long a writer must be inside one step (one save:
// encode, write, fsync, rename, directory fsync, Trace and OnError; a batch
// of Loads; a sweep) before it stops counting against MaxParallel. A disk
// that hangs (a dead network share, a FUSE server that stopped answering, a
// failing device) holds its writers in the kernel for good; without this,
// MaxParallel hung paths would stop the saves and Loads of every other
// path of the Store. MaxParallel is so a soft limit: slow steps (a hang, or
// a huge encode or slow callback) let up to MaxParallel more writers run,
// each an OS thread; a writer beyond the limit ends after its step once the
// others are no longer stuck.
const stuckAfter = time.Second

// schedule puts q on the ready list and starts a worker if fewer than
// MaxParallel run, not counting stuck ones (see stuckAfter). The caller has
// set q.scheduled under q.mu.
func (s *Store) schedule(q *queue) {
	s.mu.Lock()
	s.ready = append(s.ready, q)
	start := s.canStartLocked()
	if start {
		s.workers++
	}
	s.mu.Unlock()
	if start {
		go s.work()
	}
}

// canStartLocked reports whether another worker may start; s.mu is held.
// At the limit it arms a recheck for when a busy worker would turn stuck,
// so queued work does not wait behind a hung disk for good.
func (s *Store) canStartLocked() bool {
	limit := s.opts.maxParallel()
	active := s.workers - s.parked
	if active < limit {
		return true // the common case: no clock read
	}
	if s.rechecked {
		// No busy worker turns stuck before the armed timer fires: a full
		// pool under load costs Save nothing more than this.
		return false
	}
	now := time.Now()
	stuck, first := s.stuckLocked(now)
	if active < limit+min(stuck, limit) {
		return true
	}
	if s.workers > len(s.stepping) {
		// A worker started (or between steps) but not yet inside one:
		// the earliest it can turn stuck is a whole stuckAfter from now.
		if at := now.Add(stuckAfter); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	if !first.IsZero() {
		s.rechecked = true
		time.AfterFunc(first.Sub(now), s.recheck)
	}
	return false
}

// stuckLocked counts the workers inside one step for stuckAfter or longer,
// and returns when the earliest of the others turns stuck (zero if none
// steps); s.mu is held.
func (s *Store) stuckLocked(now time.Time) (stuck int, first time.Time) {
	for w := range s.stepping {
		if w.waitOn != nil {
			continue // parked: not counted at all
		}
		if at := w.since.Add(stuckAfter); !at.After(now) {
			stuck++
		} else if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return stuck, first
}

// recheck starts a worker for each queued path that may have one now that
// busy workers count as stuck, and otherwise re-arms itself through
// canStartLocked. It runs on the goroutine of a timer canStartLocked armed.
func (s *Store) recheck() {
	s.mu.Lock()
	s.rechecked = false
	n := 0
	for n < len(s.ready) && s.canStartLocked() {
		s.workers++
		n++
	}
	s.mu.Unlock()
	for range n {
		go s.work()
	}
}

// work is a writer goroutine. It takes queues off the ready list, runs one
// step of each and puts it back while it has more to do, so paths share the
// writers fairly. It ends when the ready list is empty: a Store with nothing
// queued runs no goroutine. A worker beyond the limit once the steps that
// let it start are no longer stuck ends after its step, so MaxParallel
// holds again.
func (s *Store) work() {
	w := &worker{goid: goid()}
	s.mu.Lock()
	for len(s.ready) > 0 {
		q := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		w.since, w.q = time.Now(), q
		s.stepping[w] = struct{}{}
		s.mu.Unlock()
		more := q.step()
		s.mu.Lock()
		delete(s.stepping, w)
		w.q = nil
		if more {
			s.ready = append(s.ready, q)
		}
		if limit, active := s.opts.maxParallel(), s.workers-s.parked; active > limit {
			if stuck, _ := s.stuckLocked(time.Now()); active > limit+min(stuck, limit) {
				break // the others, not stuck, take the ready list
			}
		}
	}
	s.workers--
	if len(s.ready) > 0 && s.canStartLocked() {
		// A writer that retires leaves its queue on the ready list (a
		// step reports more work after every op). The others fill the
		// allowance, so canStartLocked mostly arms the recheck here; that
		// is the point: they may hang before taking it.
		s.workers++
		s.mu.Unlock()
		go s.work()
		return
	}
	if s.workers == 0 {
		// Idle: a recheck still pending has nothing to do. Forget it, so a
		// timer that never fires (a testing/synctest bubble that ended)
		// cannot keep the next full pool from arming one.
		s.rechecked = false
	}
	s.mu.Unlock()
}
