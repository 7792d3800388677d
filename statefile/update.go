package statefile

import (
	"errors"
	"io/fs"

	"github.com/offmain/offmain/internal/oneline"
)

// change is one Update, or a Save or Remove queued behind one.
type change[T any] struct {
	kind opKind             // opUpdate: run fn; opSave: set v; opRemove: delete the file
	v    T                  // opSave's value
	fn   func(T) (T, error) // opUpdate's function
}

// Update queues fn to run on the path's writer with the current value, and
// returns at once, like [File.Save]: no encoding, no disk I/O on the caller.
// The current value is the newest one queued or saved on the path, or else
// the file's content read on the writer, or the default (see
// [FileOptions.Default]) for a missing file. fn's result is saved as if by
// Save. If fn returns an error, its result is dropped: the value stays
// what it was before fn (the Updates queued after it build on that), the
// file is not written for it, and fn is not run again. The error goes to
// [Options.OnError] (or [Options.Logger]) once and, until a later Save,
// Remove or Update of the path succeeds, to every Flush, as a failed
// save's; a retry that lands the write of the changes queued before fn
// does not clear it, and [Options.OnRecovered] waits for that later op. When the current value cannot be
// read, fn is not run: the Update waits, kept with its op, for the retry
// (see the package docs, "Failures and retries").
//
// Updates, Saves and Removes of one path apply in call order, and no
// Update is skipped: a Save queued after an Update replaces its result only
// after fn has run, and an Update queued after another sees its effect. The
// writer runs the fns queued while it was busy one after the other and
// writes only the last result. fn runs on the writer: it must not block for
// long, and it may change and return the value it is given, which is its
// own (decoded afresh for it, or handed over by Save). The only error is
// [ErrClosed]. Update panics if fn is nil.
func (f *File[T]) Update(fn func(T) (T, error)) error {
	if fn == nil {
		panic("statefile: Update with a nil function")
	}
	q := f.q
	q.mu.Lock()
	if q.s.closed.Load() {
		q.mu.Unlock()
		return ErrClosed
	}
	var start bool
	if q.pend == opNone {
		start = q.enqueue(opUpdate) // the base is the current value
	} else {
		q.seq++
		start = q.markRunning()
	}
	if f.slot.ups == nil {
		f.slot.ups = &changes[T]{}
	}
	f.slot.ups.push(change[T]{kind: opUpdate, fn: fn})
	q.mu.Unlock()
	if start {
		q.s.start(q)
	}
	return nil
}

// queueBehind queues c after the pending Updates; q.mu is held. A Save or
// Remove right after another replaces it, as Save replaces a pending save.
func (s *slot[T]) queueBehind(q *queue, c change[T]) bool {
	q.seq++
	if last := s.ups.last(); last.kind != opUpdate {
		*last = c
		q.superseded++
	} else {
		s.ups.push(c)
	}
	return q.markRunning()
}

// changes queues changes in blocks of changeBlock, so queuing one never
// copies those queued before: a writer stuck on a hung disk may have
// millions queued, which one growing slice would copy
// again and again.
type changes[T any] struct {
	blocks [][]change[T]
	n      int // changes queued
}

const changeBlock = 64

func (c *changes[T]) push(x change[T]) {
	k := len(c.blocks)
	if k == 0 || len(c.blocks[k-1]) == changeBlock {
		c.blocks = append(c.blocks, make([]change[T], 0, changeBlock))
		k++
	}
	c.blocks[k-1] = append(c.blocks[k-1], x)
	c.n++
}

// then returns c followed by d; either may be nil.
func (c *changes[T]) then(d *changes[T]) *changes[T] {
	switch {
	case c == nil:
		return d
	case d == nil:
		return c
	}
	c.blocks = append(c.blocks, d.blocks...)
	c.n += d.n
	return c
}

func (c *changes[T]) last() *change[T] {
	b := c.blocks[len(c.blocks)-1]
	return &b[len(b)-1]
}

// runOp runs the op the writer took, or the retry of a failed one: the
// path's pending migrations first, then a plain save or remove, or a batch
// holding Updates. It leaves o's kind as what the writer ran, for settle.
func (q *queue) runOp(o *op) result {
	if o.retry {
		if res, ok := q.unlockedRetry(); ok {
			return res
		}
		if o.kind = q.slot.takeKept(); o.kind == opNone {
			// Nothing kept (step runs no retry then): the failure stands.
			// It must never become a remove, nor a success.
			q.mu.Lock()
			prev := q.retry.failed
			q.mu.Unlock()
			return result{err: prev, value: prev}
		}
	} else {
		o.kind = q.slot.mergeKept(o.kind)
	}
	if err := q.slot.prepare(q); err != nil {
		return failedWith(err)
	}
	if o.kind == opUpdate || q.slot.batched() {
		return q.slot.runBatch(q, o)
	}
	return failedWith(q.run(*o))
}

func (s *slot[T]) batched() bool { return s.takingUps != nil }

// state is the value a batch builds, change by change.
type state[T any] struct {
	v       T
	removed bool  // the batch ends in a remove
	err     error // the current value could not be read: Updates fail with it
}

// runBatch applies the taken changes to the op's base and writes the
// result once. The error is the newest change's: a failed fn that is last
// (joined with the write's error, if the changes before it were written),
// else the write's. Earlier fn failures are reported as they happen. When
// the current value could not be read and no Save or Remove in the batch
// replaces it, no fn runs: the batch is kept whole for a retry, failing
// with the read's error.
func (s *slot[T]) runBatch(q *queue, o *op) result {
	ups := s.takingUps
	st, dirty := s.base(q, o.kind)
	if st.err != nil && !ups.replaces() {
		return failedWith(pathError("update", q.path, st.err))
	}
	s.takingUps = nil
	var last error
	i := 0
	for _, b := range ups.blocks {
		for _, c := range b {
			i++
			last = nil
			switch c.kind {
			case opSave:
				st, dirty = state[T]{v: c.v}, true
			case opRemove:
				st, dirty = state[T]{v: s.zero(), removed: true}, true
			default:
				var ok bool
				if st, ok, last = apply(q, st, c.fn); ok {
					dirty = true
				} else if i < ups.n {
					q.report(last)
				}
			}
		}
	}
	if !dirty {
		var zero T
		s.taking = zero
		return result{err: last, value: last}
	}
	o.kind = opSave
	if st.removed {
		o.kind = opRemove
	}
	s.taking = st.v
	werr := q.run(*o)
	return result{err: oneline.Join(last, werr), write: werr, value: last}
}

// replaces reports whether c holds a Save or Remove, after which the
// batch no longer depends on its base.
func (c *changes[T]) replaces() bool {
	for _, b := range c.blocks {
		for _, x := range b {
			if x.kind != opUpdate {
				return true
			}
		}
	}
	return false
}

// apply runs one Update's fn on st. ok reports whether fn succeeded.
func apply[T any](q *queue, st state[T], fn func(T) (T, error)) (state[T], bool, error) {
	if st.err != nil {
		return st, false, pathError("update", q.path, st.err)
	}
	v, err := fn(st.v)
	if err != nil {
		return st, false, pathError("update", q.path, err)
	}
	return state[T]{v: v}, true, nil
}

// base is the value a batch starts from: a Save's, a Remove's (the
// default), or for an Update the current one. dirty reports whether the
// base itself must be written.
func (s *slot[T]) base(q *queue, k opKind) (st state[T], dirty bool) {
	switch k {
	case opSave:
		return state[T]{v: s.taking}, true
	case opRemove:
		return state[T]{v: s.zero(), removed: true}, true
	}
	return s.current(q), false
}

// current returns the path's value for an Update: the file's content, read
// on the writer (a failed save's value, the newest the app queued, is the
// base instead: see mergeKept), or the default (see [FileOptions.Default])
// for a missing file. It reads the file each time rather than trusting a
// cached copy: on a filesystem that caches attributes (NFS, SMB, FUSE) no
// stat can tell that another client replaced it (see beforeWrite). A
// corrupt file is moved aside, reported, and replaced by
// [FileOptions.OnCorrupt]'s value or the default.
func (s *slot[T]) current(q *queue) state[T] {
	v, replaced, err := s.readValue(q)
	var ce *CorruptError
	switch {
	case err == nil:
		return state[T]{v: v}
	case errors.Is(err, fs.ErrNotExist):
		return state[T]{v: s.zero()}
	case errors.As(err, &ce) && !q.disk.corrupt:
		q.report(err) // the bytes are aside; the Update goes on from a fresh value
		if !replaced {
			v = s.zero()
		}
		return state[T]{v: v}
	}
	return state[T]{err: err}
}
