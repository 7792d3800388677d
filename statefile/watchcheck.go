package statefile

import (
	"errors"
	"io/fs"
	"slices"
	"time"
)

// corruptQuiet is how long bytes that do not parse must stay the same
// before a watch reports them as corrupt. A program that rewrites a file in
// place (open with O_TRUNC, write, write) leaves a prefix on disk between
// its writes, and on a loaded disk, or in an editor without atomic saves,
// the pause between two writes can outlast the settle windows (settleQuiet,
// settleMax) many times over. A prefix is news to nobody; the finished file
// is. Two seconds is twice settleMax: a writer still at work by then most
// likely stopped, and the report says so without touching the file.
const corruptQuiet = 2 * time.Second

// check runs on q's writer after a burst of events settled. It reads the
// file and reports it to q's watches unless its content is known. For a
// path with Migrations it checks the file's version first (see view): a
// newer release's file is reported as a *VersionError, an older one's is
// migrated in memory before it is decoded. A watch
// never moves a file: bytes that do not parse are checked again once they
// have stayed the same for corruptQuiet, then reported as a [*CorruptError]
// with no Aside, and left where they are. Until the path holds something
// else, q treats them as unread bytes: the next save or remove moves them
// aside first (retryQuarantine), as after a Load that could not move them.
func (q *queue) check() {
	q.mu.Lock()
	q.watch.checkQueued = false
	subs := slices.Clone(q.watch.subs)
	q.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	data, err := q.s.hooks.readFile(q.path)
	now := seen{}
	switch {
	case err == nil:
		now = seenBytes(data)
	case !errors.Is(err, fs.ErrNotExist):
		for _, sub := range subs {
			sub.postErr(err) // unreadable: say so, and check again on the next event
		}
		return
	}
	if q.disk.isKnown(now) {
		return
	}
	if err == nil {
		view, verr := q.slot.view(q, data)
		if verr != nil {
			// A newer release's file (or one whose migration failed):
			// reported, never decoded lossily.
			q.disk.setKnown(now)
			q.setBad(false)
			for _, sub := range subs {
				sub.postErr(verr)
			}
			return
		}
		derr := postData(subs, view)
		if derr != nil && !q.badSettled(now) {
			return // perhaps a writer between two writes: look again later
		}
		q.disk.setKnown(now)
		q.setBad(derr != nil)
		if derr == nil {
			return
		}
		err = &CorruptError{Path: q.path, Err: derr}
	} else {
		q.disk.setKnown(now)
		q.setBad(false)
	}
	for _, sub := range subs {
		sub.postErr(err)
	}
}

// badBytes is what a check last found at the path that did not parse.
type badBytes struct {
	seen  seen      // their content; zero when none was found
	since time.Time // when a check first found them
}

// badSettled reports whether the unparsable content now has stayed at the
// path for corruptQuiet. If not, it notes when it was first seen and arms
// a check for when it will have. It runs on q's writer.
func (q *queue) badSettled(now seen) bool {
	t := time.Now()
	if q.watch.bad.seen != now {
		q.watch.bad = badBytes{seen: now, since: t}
		q.disk.corrupt = true // unread bytes: a save moves them aside first
	}
	wait := corruptQuiet - t.Sub(q.watch.bad.since)
	if wait <= 0 {
		return true
	}
	q.mu.Lock()
	if q.watch.recheck != nil {
		q.watch.recheck.Stop()
	}
	q.watch.recheck = time.AfterFunc(wait, q.requestCheck)
	q.mu.Unlock()
	return false
}

// setBad records what a check reported: unparsable bytes left in place,
// or a state (parsed, or absent) that holds no unread bytes.
func (q *queue) setBad(bad bool) {
	q.disk.corrupt = bad
	if !bad {
		q.watch.bad = badBytes{}
	}
}

// stopRecheckLocked cancels an armed re-check of unparsable bytes; q.mu is
// held. It runs when the path's last watch stops.
func (q *queue) stopRecheckLocked() {
	if q.watch.recheck != nil {
		q.watch.recheck.Stop()
		q.watch.recheck = nil
	}
}

// postData delivers data to each watch, decoding it for each, so no two
// fns share a map or slice. It stops at a decode error: the data is corrupt.
func postData(subs []subscriber, data []byte) error {
	for _, sub := range subs {
		if err := sub.postData(data); err != nil {
			return err
		}
	}
	return nil
}
