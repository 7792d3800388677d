package statefile

import (
	"runtime"
)

// Load and Flush called on a writer.
//
// OnError, Trace and the MarshalJSON and UnmarshalJSON methods of a File's
// type run on a writer, inside one step of the path's queue. A Load or
// Flush of that path from there would queue behind the step it is part of
// and wait for itself, stopping the path for good. Go gives a goroutine no
// identity to compare (the Go FAQ, "Why is there no goroutine ID?"), and
// MarshalJSON takes no context to carry a marker, so the writer is
// recognised by the id in the header of its own stack trace
// ("goroutine 18 [running]:", written by runtime.Stack). Each worker reads
// its id once when it starts; a Load or Flush reads the caller's only while
// some writer of the Store is inside a step, which is also when that Load
// or Flush waits anyway. The read costs about 4 µs of CPU, and 11 to 14 µs
// of wall time on a 2-core VM whose load average was 16 (go test -bench
// Goid ./statefile, 5 runs; the CPU time is /usr/bin/time's over 200,000
// calls).
//
// A caller recognised as the writer of the path itself does not wait: Load
// reads the disk as it is (the original design's "already on this file's
// queue" case), Flush reports [ErrReentrant]. A caller that is the writer
// of another path waits, but first stops counting against MaxParallel, so
// the path it waits for gets a writer even when every writer is busy; and
// when that path's writer waits, directly or through others, for the
// caller, the wait would never end, so it fails with ErrReentrant instead.
//
// What is detected is a wait by a writer's own goroutine, for its own path
// or along a chain of this Store's writers that ends at it (a waits for b,
// b for c, c for a: TestReentrantCycleOfThree). What is not:
//
//   - a callback that starts a goroutine and waits for it, while that
//     goroutine calls Load or Flush of the callback's path: its id is not
//     the writer's, so it queues behind the step that waits for it, and
//     both wait for good. Callbacks must not wait for other goroutines that
//     use the Store; hand such work off without waiting (a channel with
//     room, a goroutine the callback does not join).
//   - a cycle across two Stores: a writer of Store A whose callback waits
//     for a path of Store B, whose writer's callback waits for A's path.
//     Each Store knows only its own writers. Give each file one Store, or
//     keep callbacks from waiting on another Store.
//   - the goroutine-id header changing shape in a future Go release: goid
//     then returns 0 and no caller is taken for a writer, so a callback's
//     Load of its own path waits for good, as it did before this check.

// goid returns the calling goroutine's id, parsed from the header of
// runtime.Stack, or 0 if the header is not as expected (then no caller is
// taken for a writer, and Load and Flush behave as they did before).
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// callerWriter returns the worker whose step the caller runs in, or nil
// when the caller is not one of s's writers.
func (s *Store) callerWriter() *worker {
	s.mu.Lock()
	busy := len(s.stepping) > 0
	s.mu.Unlock()
	if !busy {
		return nil // no step runs, so no callback of one: the common case
	}
	id := goid()
	if id == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.stepping {
		if w.goid == id {
			return w
		}
	}
	return nil
}

// park records that w, inside a step of another queue, is about to wait
// for q. A parked worker does not count against MaxParallel, so it starts
// another worker if work is ready. It returns ErrReentrant, and parks
// nothing, when q's writer waits, directly or through others, for w. The
// caller calls unpark after a nil return.
func (s *Store) park(w *worker, q *queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cur, n := q, 0; cur != nil && n <= len(s.stepping); n++ {
		x := s.runnerLocked(cur)
		if x == w {
			return ErrReentrant
		}
		if x == nil {
			break
		}
		cur = x.waitOn
	}
	w.waitOn = q
	s.parked++
	if len(s.ready) > 0 && s.canStartLocked() {
		s.workers++
		go s.work()
	}
	return nil
}

func (s *Store) unpark(w *worker) {
	s.mu.Lock()
	w.waitOn = nil
	s.parked--
	s.mu.Unlock()
}

// runnerLocked returns the worker inside a step of q, or nil; s.mu is held.
func (s *Store) runnerLocked(q *queue) *worker {
	for w := range s.stepping {
		if w.q == q {
			return w
		}
	}
	return nil
}
