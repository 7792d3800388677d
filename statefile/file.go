package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
		q.s.start(q)
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
		q.s.start(q)
	}
	return nil
}

// Load waits for the saves on this path queued before the call, then reads
// and decodes the file on the path's writer, and returns what it holds.
// With no file it returns the zero value (or [FileOptions.Default]'s) and
// an error matching fs.ErrNotExist. A file that does not decode is renamed
// aside (see [CorruptError]) and Load returns the zero value and an error
// matching [ErrCorrupt]. When ctx ends first Load returns ctx's error: a
// read that has not started yet is taken off the path's queue, so a GUI
// that polls Load on a hung disk queues nothing more than the one read the
// disk holds. Load works after Close.
//
// Called on the path's own writer (from a MarshalJSON or UnmarshalJSON of
// T, [Options.OnError] or [Options.Trace] for this path), Load cannot wait
// for the step it is part of: it reads the file as it is on disk at that
// moment. Called on another path's writer, it waits as usual, unless that
// would close a cycle of writers waiting for each other: then it returns
// an error at once.
func (f *File[T]) Load(ctx context.Context) (T, error) {
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
	r, start := q.addRead(func() {
		var res result
		res.v, res.err = load[T](q)
		reply <- res
	})
	if start {
		q.s.start(q)
	}
	select {
	case res := <-reply:
		return res.v, res.err
	case <-ctx.Done():
		q.dropRead(r) // unless the writer runs it: it ends on its own, into reply
		select {
		case res := <-reply: // it answered as ctx ended: the answer counts
			return res.v, res.err
		default:
			var zero T
			return zero, fmt.Errorf("statefile: load %s: %w", q.path, ctx.Err())
		}
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
// call have reached the disk, and returns nil when the file holds the
// path's newest state. A save or remove that failed is tried again at
// once, unless an attempt of it started after the Flush began, and Flush
// waits for that attempt (see "Failures and retries" in the package
// documentation). Then the path's writer reads the file: one removed, or
// left unparsable, from outside since this Store's last save gets that
// save again (the unparsable bytes moved aside first), so that nil means
// the file holds what the app saved. A file that another program saved
// over, in a form that parses, is theirs: last writer wins, as with a
// watch, which takes the path out of these checks. It
// returns a *[NotDrainedError] naming the path when its newest state is not
// on disk: in Failed with the last attempt's error, however many Flushes
// reported it before, or in Pending with ctx's error when ctx ended first
// (errors.Is(err, ctx.Err()) holds). The writer keeps going. Called on
// the path's own writer with a save pending, it returns at once with the
// path pending; with a failure and nothing pending, it reports the failure
// without a retry.
func (f *File[T]) Flush(ctx context.Context) error {
	q := f.q
	nd := &NotDrainedError{}
	m := q.mark()
	if q.s.flushOne(ctx, nd, q, m, q.s.callerWriter()) {
		q.startCheck(ctx, m).wait(ctx, nd)
	}
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
