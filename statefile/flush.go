package statefile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"

	"github.com/offmain/offmain/internal/oneline"
)

// flushAll is Flush (and Close's flush) of every path, recording in nd:
// it waits for each path's ops and their retries, then has the writers of
// the paths that drained check their files, all at once (see check), so
// that a path stuck on a hung disk costs the others no more than its own
// wait.
func (s *Store) flushAll(ctx context.Context, nd *NotDrainedError) {
	qs := s.queues()
	marks := make([]flushMark, len(qs))
	for i, q := range qs {
		marks[i] = q.mark()
	}
	w := s.callerWriter()
	var checks []*check
	for i, q := range qs {
		if s.flushOne(ctx, nd, q, marks[i], w) {
			checks = append(checks, q.startCheck(ctx, marks[i]))
		}
	}
	for _, c := range checks {
		c.wait(ctx, nd)
	}
	slices.Sort(nd.Pending)
}

// flushOne waits, for a Flush that took m, until q's ops up to m are done,
// and records in nd what did not drain or failed. It reports whether the
// path drained and its file may be checked. w is the writer the Flush
// runs on, or nil: a writer cannot wait for its own path's pending ops,
// nor for a path whose writer waits for it (reentry.go).
//
// Once they are done, a path whose newest op failed is tried again at
// once, unless an attempt started since the Flush began (see retried), and
// is reported only if that attempt failed too. On the path's own writer
// no retry can run: the failure is reported as it stands, and the file is
// not checked.
func (s *Store) flushOne(ctx context.Context, nd *NotDrainedError, q *queue, m flushMark, w *writer) bool {
	own := false
	switch {
	case w == nil:
	case w.q == q:
		if !q.doneUpTo(m.target) {
			nd.addPending(q.path, errReentrant)
			return false
		}
		own = true
	default:
		if err := s.park(w, q); err != nil {
			nd.addPending(q.path, err)
			return false
		}
		defer s.unpark(w)
	}
	if !q.wait(ctx, m.target, own) {
		nd.addPending(q.path, ctx.Err())
		return false
	}
	err, ok := q.retried(ctx, m, !own)
	switch {
	case !ok:
		nd.addPending(q.path, ctx.Err())
	case err != nil:
		nd.addFailed(q.path, err)
	}
	return ok && err == nil && !own && w == nil
}

// check is one path's check of its file for a Flush (see startCheck).
type check struct {
	q    *queue
	m    flushMark
	read *fileRead // nil: nothing to check
}

// fileRead is a read of a path's file for the Flushes' checks: one at a
// time per path, so that Flushes polling a hung disk start no more than
// one read.
type fileRead struct {
	n    uint64        // its number among the path's reads (retryState.reads)
	data []byte        // the save it compares the file with
	done chan struct{} // closed once same is set
	same bool          // the file holds data, or cannot be told not to
}

// startCheck starts the check, for a Flush that took m, that q's file
// still holds the last save this Store wrote: a file removed or damaged
// from outside since would make a Flush that reports the path drained a
// lie. It reads the file on a goroutine of its own, or joins a read
// another Flush made, so that the check waits neither for the path's
// writer (which may be inside a read the disk holds) nor past the Flush's
// ctx; only a file found changed has the writer write the save again
// (verify). Nothing is checked when there is nothing to keep (the last op
// was a remove; someone else's save is at the path, which this Store
// saw), when a watch follows the path (another process's change is news
// for the app), once Close released the path's lock, or when ctx ended
// already (the save landed; the other paths took the Flush's time).
//
// A check counts in retry.checks from here until it ends, so that Close
// waits for it: it may still write the file.
func (q *queue) startCheck(ctx context.Context, m flushMark) *check {
	c := &check{q: q, m: m}
	q.mu.Lock()
	defer q.mu.Unlock()
	data := q.disk.wrote
	if ctx.Err() != nil || data == nil || q.watch.ever || q.retry.ended {
		return c
	}
	q.retry.checks++
	c.read = q.readFor(m, data)
	return c
}

// readFor returns a read of q's file that a Flush that took m can trust
// for data: one that compares the file with data and reads it after the
// Flush began. Reads run one at a time; a Flush that cannot use the one in
// flight (made before the Flush began, it may have read the file before
// this Flush's save landed, or before someone removed it) joins, or makes,
// the one queued behind it, which has not read yet. So Flushes polling a
// hung disk add one read, not one each. q.mu is held.
func (q *queue) readFor(m flushMark, data []byte) *fileRead {
	switch rd, next := q.retry.reading, q.retry.next; {
	case rd != nil && rd.n > m.reads && bytes.Equal(rd.data, data):
		return rd
	case next != nil && bytes.Equal(next.data, data):
		return next
	}
	q.retry.reads++
	rd := &fileRead{n: q.retry.reads, data: data, done: make(chan struct{})}
	var after <-chan struct{}
	if q.retry.reading == nil {
		q.retry.reading = rd
	} else {
		after, q.retry.next = q.retry.reading.done, rd
	}
	read := q.s.hooks.readFile
	go func() { // ends when the read before it and its own have returned: on a hung disk, when it answers
		if after != nil {
			<-after // the read before hands over: this one is q.retry.reading now
		}
		cur, err := read(q.path)
		rd.same = err == nil && bytes.Equal(cur, data) || err != nil && !errors.Is(err, fs.ErrNotExist)
		q.mu.Lock()
		if q.retry.reading == rd {
			q.retry.reading, q.retry.next = q.retry.next, nil
		}
		q.mu.Unlock()
		close(rd.done)
	}()
	return rd
}

// finished waits for the read until ctx ends, and reports whether it
// finished. A read that finished counts even when ctx has ended too: the
// path that took the Flush's time was another one, and select alone would
// pick at random between the two.
func (rd *fileRead) finished(ctx context.Context) bool {
	return doneOrCtx(ctx, rd.done)
}

// doneOrCtx waits until done is closed or ctx ends, and reports whether
// done was closed, preferring it when both are.
func doneOrCtx(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-ctx.Done():
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

// wait waits for the check until ctx ends, and records its outcome in nd.
func (c *check) wait(ctx context.Context, nd *NotDrainedError) {
	if c.read == nil {
		return
	}
	q := c.q
	if !c.read.finished(ctx) {
		q.endCheck()
		nd.addPending(q.path, ctx.Err())
		return
	}
	if c.read.same {
		q.endCheck()
		return
	}
	reply := make(chan error, 1) // buffered: a Flush that gave up never strands the writer
	r := &readReq{target: c.m.target, run: func() {
		err := q.verify()
		q.endCheck()
		reply <- err
	}}
	q.mu.Lock()
	q.reads = append(q.reads, r)
	if q.markRunning() {
		q.s.start(q)
	}
	q.mu.Unlock()
	var err error
	select {
	case err = <-reply:
	case <-ctx.Done():
		q.dropCheck(r) // unless the writer runs it: it ends on its own, into reply
		select {
		case err = <-reply: // it answered as ctx ended: the answer counts
		default:
			nd.addPending(q.path, ctx.Err())
			return
		}
	}
	if err != nil {
		nd.addFailed(q.path, err)
	}
}

// endCheck ends a check: Close's waitIdle may wait for it.
func (q *queue) endCheck() {
	q.mu.Lock()
	q.retry.checks--
	q.wake()
	q.mu.Unlock()
}

// dropCheck takes r, a check's write, off q's queue if its writer has not
// taken it yet.
func (q *queue) dropCheck(r *readReq) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.reads, r); i >= 0 {
		q.reads = slices.Delete(q.reads, i, i+1)
		q.retry.checks--
		q.wake()
	}
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
