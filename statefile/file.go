package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
)

// File is one state file holding a JSON encoding of T. It is safe for
// concurrent use; all Files of one path in a Store share one queue. Its
// Load and Flush never deadlock when called from code its own writer runs
// (a MarshalJSON or UnmarshalJSON of T, [Options.OnError], [Options.Trace]).
type File[T any] struct {
	q    *queue
	slot *slot[T]
}

// Path returns the file's absolute, clean path.
func (f *File[T]) Path() string { return f.q.path }

// Save queues v to be encoded and written on the path's writer, and returns
// at once: it does no encoding and no disk I/O. If a save queued earlier has
// not started yet, v replaces it. The only error is [ErrClosed]; disk and
// encode errors are reported later through [Options.OnError],
// [Options.Logger] and the next Flush.
//
// Save takes ownership of v. If v is or holds a map, slice or pointer, the
// caller must not change what it refers to afterwards: save a copy.
func (f *File[T]) Save(v T) error {
	q := f.q
	q.mu.Lock()
	if q.s.closed.Load() {
		q.mu.Unlock()
		return ErrClosed
	}
	var start bool
	if f.slot.ups != nil {
		start = f.slot.queueBehind(q, change[T]{kind: opSave, v: v}) // an Update is pending: keep call order
	} else {
		f.slot.v = v
		start = q.enqueue(opSave)
	}
	q.mu.Unlock()
	if start {
		q.s.schedule(q)
	}
	return nil
}

// Remove queues the deletion of the file, like a save of nothing: it
// replaces a save that has not started, and a missing file is not an error.
// The only error is [ErrClosed].
func (f *File[T]) Remove() error {
	q := f.q
	q.mu.Lock()
	if q.s.closed.Load() {
		q.mu.Unlock()
		return ErrClosed
	}
	var start bool
	if f.slot.ups != nil {
		start = f.slot.queueBehind(q, change[T]{kind: opRemove})
	} else {
		var zero T
		f.slot.v = zero
		start = q.enqueue(opRemove)
	}
	q.mu.Unlock()
	if start {
		q.s.schedule(q)
	}
	return nil
}

// Load waits for the saves on this path queued before the call, then reads
// and decodes the file on the path's writer. With no file it returns the
// zero value and an error matching fs.ErrNotExist. A file that does not
// decode is renamed aside (see [CorruptError]) and Load returns the zero
// value and an error matching [ErrCorrupt]. Load works after Close.
//
// Called on the path's own writer (from a MarshalJSON or UnmarshalJSON of
// T, [Options.OnError] or [Options.Trace] for this path), Load cannot wait
// for the step it is part of: it reads the file as it is on disk at that
// moment, without the save in progress (from a MarshalJSON) or with it
// (from Trace and OnError, if it reached the disk), and without the saves
// queued after it. Called on another path's writer, it waits as usual,
// unless that would close a cycle of writers waiting for each other: then
// it returns an error matching [ErrReentrant].
func (f *File[T]) Load() (T, error) {
	return f.LoadContext(context.Background())
}

// LoadContext is [File.Load] that gives up when ctx ends, returning ctx's
// error. A read that has not started yet is taken off the path's queue,
// so a GUI that polls LoadContext on a hung disk queues nothing more than
// the one read the disk holds; a read already running finishes on the
// writer and its result is dropped.
func (f *File[T]) LoadContext(ctx context.Context) (T, error) {
	type result struct {
		v   T
		err error
	}
	q := f.q
	if w := q.s.callerWriter(); w != nil {
		if w.q == q {
			return load[T](q) // on q's own writer: read the disk as it is now
		}
		if err := q.s.park(w, q); err != nil {
			var zero T
			return zero, fmt.Errorf("statefile: load %s: %w", q.path, err)
		}
		defer q.s.unpark(w)
	}
	reply := make(chan result, 1) // buffered: a caller that gave up never strands the writer
	r := &readReq{run: func() {
		var res result
		res.v, res.err = load[T](q)
		reply <- res
	}}
	q.mu.Lock()
	r.target = q.seq
	q.reads = append(q.reads, r)
	start := q.markScheduled()
	q.mu.Unlock()
	if start {
		q.s.schedule(q)
	}
	select {
	case res := <-reply:
		return res.v, res.err
	case <-ctx.Done():
		q.dropRead(r)
		var zero T
		return zero, fmt.Errorf("statefile: load %s: %w", q.path, ctx.Err())
	}
}

// dropRead takes r off q's queue if its writer has not taken it yet.
func (q *queue) dropRead(r *readReq) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.reads, r); i >= 0 {
		q.reads = slices.Delete(q.reads, i, i+1)
	}
}

// Flush waits until the saves and removes queued on this path before the
// call have reached the disk or failed, trying a failed one again as
// [Store.Flush] does. It reports the path's failure whenever its newest
// state is not on disk after that, whether or not another Flush reported
// it before. See [Store.Flush] for the result. Called on the path's own
// writer with a save pending, it returns at once with an error matching
// [ErrReentrant]; with a failure and nothing pending, it reports the
// failure without a retry.
func (f *File[T]) Flush(ctx context.Context) error {
	q := f.q
	nd := &NotDrainedError{}
	q.s.flushOne(ctx, nd, q, q.mark(), q.s.callerWriter())
	return nd.orNil()
}

// load reads and decodes q's file, applying the path's [FileOptions]
// (fileoptions.go). It runs on q's writer, so no save can replace the file
// between the read and a quarantine.
func load[T any](q *queue) (T, error) {
	return q.slot.(*slot[T]).read(q)
}

func decode[T any](data []byte, v *T) error {
	if len(data) == 0 {
		return errors.New("empty file")
	}
	return json.Unmarshal(data, v)
}

// pendingSlot is a queue's typed value holder seen from the untyped queue.
type pendingSlot interface {
	takeValue()              // pending value and changes -> writer's; q.mu held
	encode() ([]byte, error) // the writer's value as JSON; writer only
	typeName() string        // for the error of a mismatched Open
	prepare(q *queue) error  // pending migrations, before any op (migrate.go); writer only
	batched() bool           // the writer holds Updates or changes behind one (update.go); writer only
	runBatch(q *queue, o *op) result

	// Retries (retry.go); writer only.
	settle(keep bool, kind opKind) // after an attempt: keep the writer's value and changes for a retry, or drop them
	takeKept() opKind              // the kept op -> the writer's, for its retry
	mergeKept(kind opKind) opKind  // a new op of kind replaces the kept one, or builds on it (an Update)

	versioned() bool                            // the path has Migrations (migrate.go)
	checkNewer(q *queue, data []byte) error     // a *VersionError if data is newer than the migrations know
	view(q *queue, data []byte) ([]byte, error) // data at the newest version, for a watch: migrated in memory, or a *VersionError
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
// settle drops it, or keeps it for a retry.
func (s *slot[T]) encode() ([]byte, error) {
	data, err := json.Marshal(s.taking)
	if err != nil {
		return nil, &finalError{fmt.Errorf("statefile: encode: %w", err)}
	}
	if err := s.checkVersion(data); err != nil {
		return nil, &finalError{err}
	}
	return append(data, '\n'), nil
}

func (s *slot[T]) typeName() string { return reflect.TypeFor[T]().String() }
