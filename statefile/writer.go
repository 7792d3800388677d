package statefile

import (
	"sync"
	"time"
)

// Writers. A path's writer is a goroutine that the first op or read queued
// on an idle path starts (start); it runs the path's steps one at a time
// and ends when none is left (queue.step), so a Store with nothing queued
// runs no goroutine. Each step holds a slot while it runs: at most
// Options.MaxParallel steps touch the disk at once. A step still running
// after stuckAfter gives its token back, so a hung disk (a dead network
// share, a FUSE server that stopped answering, a failing device), which
// holds its writers in the kernel for good, never stops the other paths:
// it costs each path waiting on it one goroutine and thread, and no token.

// stuckAfter is how long a step (one save: encode, write, fsync, rename,
// directory fsync, Trace and OnError; a batch of reads; a sweep) runs
// before it stops counting against MaxParallel.
const stuckAfter = time.Second

// writer is one path's writer goroutine.
type writer struct {
	q    *queue
	goid uint64 // its goroutine's id (reentry.go)
	tok  *token // the token of the step it runs; set and used on its own goroutine

	waitOn *queue // the queue a Load or Flush inside its step waits for, or nil; guarded by Store.mu
}

// start starts q's writer. The caller has set q.running (markRunning); it
// may hold q.mu, as start takes no lock.
func (s *Store) start(q *queue) { go s.write(q) }

// write is a path's writer goroutine.
func (s *Store) write(q *queue) {
	w := &writer{q: q, goid: goid()}
	s.mu.Lock()
	s.writers[w] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.writers, w)
		s.mu.Unlock()
	}()
	for {
		w.tok = s.takeToken()
		more := q.step()
		w.tok.give()
		if !more {
			return
		}
	}
}

// token is a step's share of Options.MaxParallel, taken from the Store's
// semaphore and given back when the step ends or when it has run for
// stuckAfter, whichever is first.
type token struct {
	sem   chan struct{}
	mu    sync.Mutex  // protects the fields below
	stuck *time.Timer // gives the token back after stuckAfter
	given bool
}

func (s *Store) takeToken() *token {
	s.sem <- struct{}{}
	t := &token{sem: s.sem}
	t.mu.Lock()
	t.stuck = time.AfterFunc(stuckAfter, t.give) // its give waits for the assignment
	t.mu.Unlock()
	return t
}

// give gives the token back; a second call does nothing.
func (t *token) give() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.given {
		return
	}
	t.given = true
	t.stuck.Stop()
	<-t.sem
}

// queues returns the Store's queues.
func (s *Store) queues() []*queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	qs := make([]*queue, 0, len(s.files))
	for _, q := range s.files {
		qs = append(qs, q)
	}
	return qs
}
