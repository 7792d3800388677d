package statefile

import (
	"runtime"
)

// Load and Flush called on a writer.
//
// OnError, Trace, OnRecovered and the MarshalJSON and UnmarshalJSON
// methods of a File's type run on a path's writer, inside one of its
// steps. A Load or Flush of that path from there would queue behind the
// step it is part of and wait for itself, stopping the path for good. The
// writer must recognise itself, and MarshalJSON takes no context that
// could carry a marker, while Go gives a goroutine no identity to compare
// (the Go FAQ, "Why is there no goroutine ID?"): so a writer is told by
// the id in the header of its own stack trace ("goroutine 18 [running]:",
// written by runtime.Stack). Each writer reads its id once when it starts;
// a Load or Flush reads the caller's only while some writer of the Store
// runs, which is also when it may have to wait anyway. The read costs a
// few microseconds (the figures are in DESIGN.md).
//
// A caller recognised as the writer of the path itself does not wait: Load
// reads the disk as it is, Flush reports errReentrant. A caller that is
// the writer of another path waits, but first gives back its step's token,
// so the path it waits for gets one even when every token is taken; and
// when that path's writer waits, directly or through others, for the
// caller's path, the wait would never end, so it fails with errReentrant
// instead.
//
// What is not detected:
//
//   - a callback that starts a goroutine and waits for it, while that
//     goroutine calls Load or Flush of the callback's path: its id is not
//     the writer's, so it queues behind the step that waits for it, and
//     both wait for good. Callbacks must not wait for other goroutines that
//     use the Store; hand such work off without waiting.
//   - a cycle across two Stores: each Store knows only its own writers.
//   - the goroutine-id header changing shape in a future Go release: goid
//     then returns 0 and no caller is taken for a writer, so a callback's
//     Load of its own path waits for good.

// goid returns the calling goroutine's id, parsed from the header of
// runtime.Stack, or 0 if the header is not as expected (then no caller is
// taken for a writer).
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

// callerWriter returns the writer whose step the caller runs in, or nil
// when the caller is not one of s's writers.
func (s *Store) callerWriter() *writer {
	s.mu.Lock()
	busy := len(s.writers) > 0
	s.mu.Unlock()
	if !busy {
		return nil // no writer runs, so no callback of one: the common case
	}
	id := goid()
	if id == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.writers {
		if w.goid == id {
			return w
		}
	}
	return nil
}

// park records that w, inside a step of its own queue, is about to wait
// for q, and gives w's token back: the writer of q may need it. It returns
// errReentrant, and parks nothing, when q's writer waits, directly or
// through others, for w's queue. The caller calls unpark after a nil
// return.
func (s *Store) park(w *writer, q *queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cur, n := q, 0; cur != nil && n <= len(s.writers); n++ {
		if cur == w.q {
			return errReentrant
		}
		cur = s.waitOfLocked(cur)
	}
	w.waitOn = q
	w.tok.give()
	return nil
}

func (s *Store) unpark(w *writer) {
	s.mu.Lock()
	w.waitOn = nil
	s.mu.Unlock()
}

// waitOfLocked returns the queue that the writer of q waits for, or nil;
// s.mu is held.
func (s *Store) waitOfLocked(q *queue) *queue {
	for w := range s.writers {
		if w.q == q && w.waitOn != nil {
			return w.waitOn
		}
	}
	return nil
}
