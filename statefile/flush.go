package statefile

import (
	"context"
	"errors"
	"slices"

	"github.com/offmain/offmain/internal/oneline"
)

// flushOne waits, for a Flush that took m, until q's ops up to m are done,
// and records in nd what did not drain or failed. w is the writer the
// Flush runs on, or nil: a writer cannot wait for its own path's pending
// ops, nor for a path whose writer waits for it (reentry.go).
//
// Once they are done, a path whose newest op failed is tried again at
// once, unless an attempt started since the Flush began (see retried), and
// is reported only if that attempt failed too. A path whose newest op
// landed has its file checked (see verify). On the path's own writer
// neither can run: the state is reported as it stands.
func (s *Store) flushOne(ctx context.Context, nd *NotDrainedError, q *queue, m flushMark, w *writer) {
	own := false
	switch {
	case w == nil:
	case w.q == q:
		if !q.doneUpTo(m.target) {
			nd.addPending(q.path, errReentrant)
			return
		}
		own = true
	default:
		if err := s.park(w, q); err != nil {
			nd.addPending(q.path, err)
			return
		}
		defer s.unpark(w)
	}
	if !q.wait(ctx, m.target, own) {
		nd.addPending(q.path, ctx.Err())
		return
	}
	err, ok := q.retried(ctx, m, !own)
	if ok && err == nil && !own {
		err, ok = q.confirm(ctx)
	}
	switch {
	case !ok:
		nd.addPending(q.path, ctx.Err())
	case err != nil:
		nd.addFailed(q.path, err)
	}
}

// confirm checks, for a Flush, that the file still holds the last save
// this Store wrote: a file removed or replaced from outside (a person's
// rm, a cleaning tool, a sync client) since would make a Flush that reports
// the path drained a lie. The read runs on a goroutine of its own, so that
// it waits neither for the path's writer (which may be inside a Load that
// the disk holds) nor past ctx; only a file found changed makes the
// writer write the save again (verify). A path with a watch is left to
// the watch: another process's change is news the app answers. So is a
// path whose last op was a remove, or whose file someone else wrote since
// this Store read it. A Flush whose ctx ended before the check (the other
// paths took its time) leaves it out: the save landed. It returns false
// when ctx ended during the check.
func (q *queue) confirm(ctx context.Context) (error, bool) {
	data := q.lastWrite()
	if data == nil || ctx.Err() != nil || q.watched() || q.retryEnded() {
		return nil, true // nothing to keep; or Close released the lock, and another Store may write the path
	}
	read := q.s.hooks.readFile
	same := make(chan bool, 1) // buffered: a Flush that gave up leaves the read to end alone
	go func() {
		ok, known := holds(read, q.path, data)
		same <- ok || !known
	}()
	select {
	case ok := <-same:
		if ok {
			return nil, true
		}
	case <-ctx.Done():
		return nil, false
	}
	reply := make(chan error, 1) // buffered: a Flush that gave up never strands the writer
	r, start := q.addRead(func() { reply <- q.verify() })
	if start {
		q.s.start(q)
	}
	select {
	case err := <-reply:
		return err, true
	case <-ctx.Done():
		q.dropRead(r)
		return nil, false
	}
}

func (q *queue) retryEnded() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.retry.ended
}

// addFailed records a path whose newest state is not on disk, and why.
func (nd *NotDrainedError) addFailed(path string, err error) {
	if nd.Failed == nil {
		nd.Failed = make(map[string]error)
	}
	nd.Failed[path] = err
}

// addPending records a path that did not drain, and why. A path is listed
// once (Close may find it pending in its watch and in its queue).
func (nd *NotDrainedError) addPending(path string, why error) {
	if !slices.Contains(nd.Pending, path) {
		nd.Pending = append(nd.Pending, path)
	}
	switch {
	case nd.Err == nil:
		nd.Err = why
	case !errors.Is(nd.Err, why):
		nd.Err = oneline.Join(nd.Err, why)
	}
}
