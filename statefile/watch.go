package statefile

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Watch calls fn when the file at f's path is replaced, rewritten or
// removed by anyone other than this Store: another process, a second Store,
// a person's editor, a sync tool. It returns a stop function that ends the
// watch. It is safe for concurrent use; several watches of one path each
// get every change.
//
// What counts as a change: the writer remembers what this Store last put at
// the path (a hash of the bytes it wrote, or "absent" after a Remove or a
// quarantine) and what it last reported. A change whose content is one of
// those is not reported, so the Store's own saves are never echoed,
// however they interleave with events. Until the Store has written or
// reported anything, the first event reports the file as it is.
//
// Events are coalesced: fn is called once a burst of events on the path has
// been quiet for 100 ms (and at least once a second during a burst that
// does not end), with the file as it is then. The read is queued on the
// path's writer like a [File.Load]: it waits for the saves queued before
// it and never races them or a quarantine. fn gets the decoded value and a
// nil error; the zero value and an error matching fs.ErrNotExist when the
// file was removed. A watch never moves or changes a file. Bytes that do
// not parse may be a writer between two writes (a truncate, a pause, the
// rest), so they are read again until they have stayed the same for 2 s,
// and only then reported: the zero value and a [*CorruptError] whose Aside
// is empty, as the bytes are left in place. Until the file changes, the
// next Save or Remove moves them aside first (and fails if it cannot),
// while Load moves them aside as it does any corrupt file. After an
// external change Load returns the new content, and the next Save replaces
// it: last writer wins.
//
// fn runs on a goroutine of the package, one call at a time per watch; it
// may call Load, Save and Flush. While it runs, newer changes wait, and
// only the newest is delivered after it returns. The goroutine exists only
// while a call is pending or running.
//
// The Store's watches share one fsnotify watcher, which watches the path's
// directory: a save renames a new file over the name, and a watch on the
// old file would end with it. Watch creates a missing directory (0o700) as
// a save would, so a watch can start before the first save. When the
// directory is removed or renamed, fn gets fs.ErrNotExist for the file, and
// the watch tries every second to watch a directory at that name again
// (another program's, or the one the next Save makes); once it can, it
// checks the file and reports what it finds. A directory renamed over the
// name is seen at once when its parent is watched too. Linux reports a
// removed directory only when no process holds it open any more (a shell
// cd'd into it delays the report until it leaves).
// Watch does this setup on the caller (an inotify_add_watch on Linux), and
// returns its error with the path; after [Store.Close] it returns
// [ErrClosed].
//
// stop releases the watch and, with the Store's last watch, the fsnotify
// watcher and its goroutines. When it returns, fn is not running and will
// not be called again. It waits for a call of fn in progress, without
// bound, so fn must not call stop itself. A second call does nothing.
// [Store.Close] stops every watch, waiting for fn only until its context
// ends.
func (f *File[T]) Watch(fn func(T, error)) (stop func(), err error) {
	if fn == nil {
		panic("statefile: Watch with a nil func")
	}
	reg, err := f.q.s.addWatch(f.q, &watch[T]{fn: fn})
	if err != nil {
		return nil, err
	}
	return reg.stop, nil
}

// subscriber is a watch seen from its untyped queue.
type subscriber interface {
	postData(data []byte) error // decode into a fresh value and deliver; the decode error if any
	postErr(err error)          // deliver the zero value with err
	stop() <-chan struct{}      // deliver nothing more; the channel closes once fn is not running
}

// watch delivers to fn on a goroutine that runs while a result is pending:
// the writer never waits for fn, and a slow fn sees only the newest state.
type watch[T any] struct {
	fn func(T, error)

	mu      sync.Mutex    // protects the fields below
	v       T             // the newest undelivered result...
	err     error         // ...and its error
	has     bool          // v, err hold an undelivered result
	running bool          // the delivering goroutine runs
	stopped bool          // stop was called: drop results
	idle    chan struct{} // made by stop, closed when the goroutine ends
}

func (w *watch[T]) postData(data []byte) error {
	var v T
	if err := decode(data, &v); err != nil {
		return err
	}
	w.post(v, nil)
	return nil
}

func (w *watch[T]) postErr(err error) {
	var zero T
	w.post(zero, err)
}

func (w *watch[T]) post(v T, err error) {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.v, w.err, w.has = v, err, true
	start := !w.running
	w.running = true
	w.mu.Unlock()
	if start {
		go w.deliver()
	}
}

// deliver calls fn with each pending result and ends when none is left.
func (w *watch[T]) deliver() {
	for {
		w.mu.Lock()
		if !w.has || w.stopped {
			w.running = false
			if w.idle != nil {
				close(w.idle)
				w.idle = nil
			}
			w.mu.Unlock()
			return
		}
		v, err := w.v, w.err
		var zero T
		w.v, w.err, w.has = zero, nil, false
		w.mu.Unlock()
		w.fn(v, err)
	}
}

func (w *watch[T]) stop() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	var zero T
	w.v, w.err, w.has = zero, nil, false
	if !w.running {
		return closedChan
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	return w.idle
}

// closedChan is a channel that is always closed.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// watchState is a path's watches, and what its checks saw. Guarded by the
// queue's mu unless marked writer only.
type watchState struct {
	subs        []subscriber // the path's watches
	ever        bool         // the path has had a watch: its changes from outside are the app's to answer
	checkQueued bool         // a check is in the queue's reads and not started
	bad         badBytes     // writer only: unparsable bytes a check found (watchcheck.go)
	recheck     *time.Timer  // the check armed for when those bytes will have stayed corruptQuiet
}

func (q *queue) addSub(sub subscriber) {
	q.mu.Lock()
	q.watch.subs = append(q.watch.subs, sub)
	q.watch.ever = true
	q.mu.Unlock()
}

func (q *queue) removeSub(sub subscriber) {
	q.mu.Lock()
	q.watch.subs = slices.DeleteFunc(q.watch.subs, func(s subscriber) bool { return s == sub })
	if len(q.watch.subs) == 0 {
		q.stopRecheckLocked()
	}
	q.mu.Unlock()
}

// requestCheck queues a check of the file behind the ops queued so far,
// unless one is queued and not started yet.
func (q *queue) requestCheck() {
	q.mu.Lock()
	if q.watch.checkQueued {
		q.mu.Unlock()
		return
	}
	q.watch.checkQueued = true
	q.reads = append(q.reads, &readReq{target: q.seq, run: q.check})
	start := q.markRunning()
	q.mu.Unlock()
	if start {
		q.s.start(q)
	}
}

// stop ends the watch: after it returns, fn is not running and is never
// called again. A second call does nothing.
func (r *watchReg) stop() { r.stopContext(context.Background()) }

// stopContext ends the watch like stop, but waits for fn's return and the
// loop's end only until ctx ends, and then reports false. fn is never
// called again either way.
func (r *watchReg) stopContext(ctx context.Context) bool {
	r.once.Do(func() {
		s := r.q.s
		s.watchMu.Lock()
		ended := s.dropLocked(r)
		s.watchMu.Unlock()
		if ended != nil {
			r.ends = append(r.ends, ended)
		}
		r.ends = append(r.ends, r.sub.stop())
	})
	for _, ch := range r.ends {
		if !doneOrCtx(ctx, ch) {
			return false
		}
	}
	return true
}

// stopWatches stops every live watch of s (Store.Close), waiting for the
// fns and the loop until ctx ends; the paths of the watches it could not
// wait for go to nd as pending.
func (s *Store) stopWatches(ctx context.Context, nd *NotDrainedError) {
	s.watchMu.Lock()
	var regs []*watchReg
	if dw := s.watcher; dw != nil {
		dw.mu.Lock()
		for r := range dw.regs {
			regs = append(regs, r)
		}
		dw.mu.Unlock()
	}
	s.watchMu.Unlock()
	for _, r := range regs {
		if !r.stopContext(ctx) {
			nd.addPending(r.q.path, ctx.Err())
		}
	}
}
