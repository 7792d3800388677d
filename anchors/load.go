package anchors

import (
	"context"
	"maps"
	"time"

	"github.com/offmain/offmain/internal/keyed"
)

// readLocked is the read's merge: it puts the file's places under the
// ones set since Open (see mergeLocked) and, when the Store watches,
// applies the file's tombstones, then ends the tracking of the chats
// forgotten since Open. It reports whether the file held anything now
// dropped, so that it is rewritten. Caller holds mu.
func (s *Store) readLocked(data fileData, now time.Time) (dropped bool) {
	dropped = s.mergeLocked(data.Anchors)
	if s.gone != nil && s.forgetLocked(data.Forgotten, now) {
		dropped = true
	}
	s.forgot = nil
	return dropped
}

// mergeLocked puts the file's places, oldest first, before the places set
// since Open, skipping chats set or forgotten since, then evicts beyond max.
// It reports whether the file held places that are now dropped.
func (s *Store) mergeLocked(recs []record) (dropped bool) {
	front := s.lru.Front()
	for _, r := range recs {
		if _, ok := s.byChat[r.Chat]; ok || s.forgot[r.Chat] {
			continue
		}
		if front == nil {
			s.byChat[r.Chat] = s.lru.PushBack(&r)
		} else {
			s.byChat[r.Chat] = s.lru.InsertBefore(&r, front)
		}
	}
	n := s.lru.Len()
	s.evictLocked()
	return s.lru.Len() < n
}

// Load waits until the file has been read or ctx ends. It returns what the
// read met: nil when the file was read or did not exist; an error matching
// statefile.ErrCorrupt when it did not parse (statefile kept the bytes
// aside when it could, see statefile.CorruptError; the store started empty
// and saves normally); any other read error (EACCES, EIO), after which the
// Store keeps working in memory but never saves, so that a file it could
// not read is not overwritten: fix the cause and start again. With
// [Options.Watch], it also returns an error saying so if the watch could
// not start (the Store then works without it). Every call returns the same
// error, or one wrapping ctx's if ctx ended first.
//
// Load is optional, and blocks: call it off the GUI's main goroutine, to
// log what the read met and to know the places are all there, or wait on
// [Store.Loaded] instead.
func (s *Store) Load(ctx context.Context) error { return s.core.Load(ctx) }

// GetContext is [Store.Get] for callers that can wait: it first waits for
// the file's read, behind the saves already queued on its path, until ctx
// ends. It returns an error wrapping ctx's only when ctx ended first, and
// then answers like Get; what the read met is [Store.Load]'s to report.
func (s *Store) GetContext(ctx context.Context, chat string) (Anchor, bool, error) {
	err := s.core.Wait(ctx)
	a, ok := s.Get(chat)
	return a, ok, err
}

// Loaded returns a channel that is closed once the file's read has landed
// and its places are merged: from then on Get answers for every place. It
// is closed once; Open started the read. A GUI can wait
// on it off its main goroutine and then redraw, for instance to restore a
// scroll place that Get did not know yet.
func (s *Store) Loaded() <-chan struct{} { return s.core.Loaded() }

// snapshotLocked is what a save writes: a copy of the places, least
// recently set first, and the tombstones; or nothing when there are none,
// and the file is removed. It notes the places in saved, for Set. Caller
// holds mu.
func (s *Store) snapshotLocked(now time.Time) (fileData, bool) {
	recs := make([]record, 0, s.lru.Len())
	saved := make(map[string]Anchor, s.lru.Len())
	for e := s.lru.Front(); e != nil; e = e.Next() {
		r := *e.Value.(*record)
		recs = append(recs, r)
		saved[r.Chat] = r.Anchor
	}
	s.saved = saved
	keyed.Prune(s.gone, now)
	var gone map[string]time.Time
	if len(s.gone) > 0 {
		gone = maps.Clone(s.gone)
	}
	if len(recs) == 0 && gone == nil {
		return fileData{}, false
	}
	return fileData{Version: fileVersion, Anchors: recs, Forgotten: gone}, true
}

// Flush queues any unsaved Set or Forget now, then waits until the file has
// reached the disk or ctx ends. If the file has not been read yet, it waits
// for the read first (a save needs the file's places). It returns
// statefile's error (a *statefile.NotDrainedError naming the path when ctx
// ended first or the save failed), an error wrapping ctx's when the read
// did not finish in time, and errors saying why saves are off or the last
// one could not be queued (statefile.ErrClosed).
func (s *Store) Flush(ctx context.Context) error { return s.core.Flush(ctx) }

// Close stops the watch, if any (waiting for a call of [Options.OnChange]
// in progress, so OnChange must not call Close), stops the settle timer,
// queues any unsaved Set or Forget, and waits like [Store.Flush]. If the
// file is still being read when ctx ends, the save is queued when the read
// finishes, and no watch starts. After Close, Get still answers and Set and
// Forget change memory only. Close does not close the statefile.Store. A
// second Close only waits for the file again. A Flush called while Close
// queues the last Set returns only after it is queued.
func (s *Store) Close(ctx context.Context) error { return s.core.Close(ctx) }
