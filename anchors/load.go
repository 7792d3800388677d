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

// Load waits until the file's first read has ended or ctx ends, and
// returns what the latest read met: nil when the file was read or did not
// exist; an error matching statefile.ErrCorrupt when it did not parse
// (statefile kept the bytes aside when it could, see
// statefile.CorruptError; the store started empty and saves normally); one
// matching statefile.ErrNewerVersion for a newer release's file, which the
// Store never saves over; and any other read error (EACCES, EIO, EISDIR, a
// network home not mounted yet). After such an error the Store keeps every
// place in memory, saves nothing, so that a file it could not read is
// never overwritten, and reads the file again: soon after the failure,
// then later each time (at most every 30 s), and at once when a
// save comes due and at every Flush and Close. Once a read succeeds, the
// file's places are merged under the ones set meanwhile, the Store saves,
// [Store.Loaded] closes, and Load returns nil. With [Options.Watch], Load
// also returns an error saying so if the watch could not start (the Store
// then works without it). If ctx ends first, it returns an error wrapping
// ctx's.
//
// Load is optional, and blocks: call it off the GUI's main goroutine, to
// log what the read met and to know the places are all there, or wait on
// [Store.Loaded] instead.
func (s *Store) Load(ctx context.Context) error { return s.core.Load(ctx) }

// Loaded returns a channel that is closed once the file's places are
// merged: from then on Get answers for every place. It closes after a read
// that found the file, no file, a corrupt one (moved aside) or a newer
// release's (whose places are never read). While a read that failed
// otherwise is retried (see [Store.Load]) it stays open, and it closes
// when a retry reads the file. A GUI can wait on it off its main goroutine
// and then redraw, for instance to restore a scroll place that Get did not
// know yet.
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
// for the read first (a save needs the file's places), and if the read
// failed it reads again at once. It returns statefile's error (a
// *statefile.NotDrainedError naming the path when ctx ended first or the
// save failed), an error wrapping ctx's when the read did not finish in
// time, an error saying the places are not saved when the file still
// cannot be read or a newer release wrote it, and one matching
// statefile.ErrClosed when the last save could not be queued. With no Set
// or Forget since Open it has nothing to save, and returns nil while the
// file cannot be read.
func (s *Store) Flush(ctx context.Context) error { return s.core.Flush(ctx) }

// Close stops the watch, if any (waiting for a call of [Options.OnChange]
// in progress, so OnChange must not call Close), stops the settle timer,
// queues any unsaved Set or Forget, and waits like [Store.Flush]. If the
// file is still being read when ctx ends, the save is queued when the read
// finishes, and no watch starts. Close ends the timed reads of a file that
// could not be read; with an edit unsaved, it first reads it once more. After Close, Get still answers and Set and
// Forget change memory only. Close does not close the statefile.Store. A
// second Close only waits for the file again. A Flush called while Close
// queues the last Set returns only after it is queued.
func (s *Store) Close(ctx context.Context) error { return s.core.Close(ctx) }
