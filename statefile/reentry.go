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
// some writer of the Store is inside a step (2.3 µs on a 2-core Linux VM:
// go test -bench Goid ./statefile), which is also when that Load or Flush
// waits anyway.
//
// A caller recognised as the writer of the path itself does not wait: Load
// reads the disk as it is (the original design's "already on this file's
// queue" case), Flush reports [ErrReentrant]. A caller that is the writer
// of another path waits, but first stops counting against MaxParallel, so
// the path it waits for gets a writer even when every writer is busy; and
// when that path's writer waits, directly or through others, for the
// caller, the wait would never end, so it fails with ErrReentrant instead.

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
