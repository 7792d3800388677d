package statefile

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync/atomic"
)

// pendingSlot is a queue's typed value holder seen from the untyped queue:
// the value side of its ops, what a retry keeps of them, and its file's
// versions. Its methods run on the writer unless marked.
type pendingSlot interface {
	valueSlot
	keptSlot
	versionSlot
}

// valueSlot holds the queued value and encodes it (this file, update.go).
type valueSlot interface {
	takeValue()                         // the pending value and changes become the writer's; q.mu held
	encode(path string) ([]byte, error) // the writer's value as JSON
	batched() bool                      // the writer holds Updates, or changes behind one
	runBatch(q *queue, o *op) result    // apply them and write once (update.go)
	parses(q *queue, data []byte) bool  // data decodes as the path's type, at its newest version
	typeName() string                   // for the error of a mismatched Open; any goroutine
}

// keptSlot is what the writer keeps of a failed op for its retry.
type keptSlot interface {
	endAttempt(keep bool, kind opKind) // after an attempt: keep the writer's value and changes for a retry, or drop them
	takeKept() opKind                  // the kept op becomes the writer's, for its retry
	mergeKept(kind opKind) opKind      // a new op of kind replaces the kept one, or builds on it (an Update)
}

// versionSlot is the path's format history (migrate.go).
type versionSlot interface {
	prepare(q *queue) error                     // pending migrations, before any op
	versioned() bool                            // the path has Migrations
	checkNewer(q *queue, data []byte) error     // a *VersionError if data is newer than the migrations know
	view(q *queue, data []byte) ([]byte, error) // data at the newest version: migrated in memory, or a *VersionError
}

// slot holds a path's newest queued value and the one its writer encodes,
// so Save stores a T without boxing it in an interface (no allocation).
type slot[T any] struct {
	v      T           // newest queued value; guarded by the queue's mu
	ups    *changes[T] // Updates, and the Saves and Removes queued behind them, in call order; guarded by the queue's mu
	taking T           // the value the writer encodes; writer only

	takingUps *changes[T]                    // the changes the writer applies after taking; writer only
	kept      kept[T]                        // writer only: a failed op kept for its retry (retry.go)
	migrated  bool                           // writer only: the file is at the newest version (migrate.go)
	opts      atomic.Pointer[FileOptions[T]] // set by OpenWith (fileoptions.go); nil means the defaults
}

// kept is a failed op, as its writer will run it again: a save of v, a
// remove, or, when the failure came before its changes ran (the file could
// not be read or migrated), the op as it was taken, changes and all.
type kept[T any] struct {
	has  bool
	kind opKind
	v    T
	ups  *changes[T]
}

func (s *slot[T]) takeValue() {
	var zero T
	s.taking, s.v = s.v, zero
	s.takingUps, s.ups = s.ups, nil
}

// encode returns the writer's value as JSON. It leaves the value in place:
// endAttempt drops it, or keeps it for a retry.
func (s *slot[T]) encode(path string) ([]byte, error) {
	data, err := json.Marshal(s.taking)
	if err != nil {
		return nil, &finalError{pathError("encode", path, err)}
	}
	if err := s.checkVersion(data); err != nil {
		return nil, &finalError{pathError("encode", path, err)}
	}
	return append(data, '\n'), nil
}

func (s *slot[T]) typeName() string { return reflect.TypeFor[T]().String() }

// endAttempt ends an attempt on the writer: with keep, the op it ran (now
// of kind, with the writer's value and any changes not yet applied) is
// kept for its retry; otherwise the writer's value is dropped, so the
// collector has it.
func (s *slot[T]) endAttempt(keep bool, kind opKind) {
	var zero T
	if keep {
		s.kept = kept[T]{has: true, kind: kind, v: s.taking, ups: s.takingUps}
	} else {
		s.kept = kept[T]{}
	}
	s.taking, s.takingUps = zero, nil
}

// takeKept hands the kept op to the writer for its retry and returns its
// kind.
func (s *slot[T]) takeKept() opKind {
	k := s.kept
	s.kept = kept[T]{}
	s.taking, s.takingUps = k.v, k.ups
	return k.kind
}

// mergeKept settles a kept op when a new op of kind was taken: a Save or
// Remove replaces whatever the failed op would have written, so it is
// dropped; an Update builds on the failed op's value, the newest the app
// queued, so the kept op runs first, its changes before the new ones. It
// returns the kind the writer runs.
func (s *slot[T]) mergeKept(kind opKind) opKind {
	k := s.kept
	s.kept = kept[T]{}
	if !k.has || kind != opUpdate {
		return kind
	}
	s.taking = k.v
	s.takingUps = k.ups.then(s.takingUps)
	return k.kind
}

// parses reports whether data, the file's bytes, decodes as T once
// migrated to the newest version; a newer release's file counts as
// parsing (it is someone else's, never decoded here).
func (s *slot[T]) parses(q *queue, data []byte) bool {
	view, err := s.view(q, data)
	if err != nil {
		return errors.Is(err, ErrNewerVersion)
	}
	var v T
	return decode(view, &v) == nil
}
