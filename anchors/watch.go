package anchors

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/offmain/offmain/internal/mirror"
)

// tombstoneTTL is how long a watching Store keeps, and writes, a forgotten
// chat's tombstone. It must outlast the time another window can go without
// merging the file, or that window's next save brings the place back:
// statefile reports a change within a second of its last event, so an hour
// leaves room for a disk that hangs or a laptop that sleeps mid-merge.
const tombstoneTTL = time.Hour

// startWatch starts the watch once the file has been read, unless Close
// came first. Order: watchMu, then mu.
func (s *Store) startWatch() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.closed {
		return
	}
	stop, err := s.file.Watch(s.changed)
	if err != nil {
		s.mu.Lock()
		s.watchErr = fmt.Errorf("anchors: not watching: %w", err)
		s.mu.Unlock()
		return
	}
	s.stopWatch = stop
}

// endWatch stops the watch, if one runs, waiting for a call of changed in
// progress, and keeps one from starting later.
func (s *Store) endWatch() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.closed = true
	if s.stopWatch != nil {
		s.stopWatch()
		s.stopWatch = nil
	}
}

// changed is the watch's fn: another process changed the file. It runs on
// statefile's goroutine, one call at a time, and never after the watch stops.
func (s *Store) changed(data fileData, err error) {
	mirror.Report(data, err, s.sched.Mark,
		func(d fileData) ([]string, bool) { return s.merge(d, time.Now()) }, s.onChange)
}

// merge applies what another process saved, chat by chat, the later
// UpdatedAt winning (the file's on a tie), then orders the places by
// UpdatedAt and evicts beyond max. It returns the chats whose place
// changed, sorted, and whether the file lacks something memory has (a
// place, or a Forget newer than the file's place), which only a save tells
// the other windows. A place of the file that only eviction dropped needs
// no save: a window with a larger Max may keep it.
func (s *Store) merge(data fileData, now time.Time) (chats []string, resave bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
	before := s.placesLocked()
	theirs := make(map[string]Anchor, len(data.Anchors))
	for _, r := range data.Anchors {
		theirs[r.Chat] = r.Anchor
	}
	adopted := false
	for chat, a := range theirs {
		e, mine := s.byChat[chat]
		switch {
		case mine && e.Value.(*record).UpdatedAt.After(a.UpdatedAt):
			continue // set here since: the save below tells them
		case !mine && s.gone[chat].After(a.UpdatedAt):
			resave = true // forgotten here since
			continue
		case mine:
			e.Value.(*record).Anchor = a
		default:
			s.byChat[chat] = s.lru.PushBack(&record{Chat: chat, Anchor: a})
		}
		delete(s.gone, chat)
		delete(s.saved, chat) // their place: a scroll back to ours is a new Set
		adopted = true
	}
	s.forgetLocked(data.Forgotten, now)
	if adopted {
		s.sortLocked()
	}
	s.evictLocked()
	for e := s.lru.Front(); e != nil; e = e.Next() {
		r := e.Value.(*record)
		if a, ok := theirs[r.Chat]; !ok || !samePlace(a, r.Anchor) {
			resave = true // missing from their save, or newer here
			break
		}
	}
	return diff(before, s.placesLocked()), resave
}

// forgetLocked applies the file's tombstones: a place set before its chat's
// tombstone goes, and the newer tombstone of a chat is kept. It reports
// whether it dropped anything, a place or a tombstone (expired, or older
// than the chat's place), so that the read rewrites the file.
func (s *Store) forgetLocked(forgotten map[string]time.Time, now time.Time) (dropped bool) {
	for chat, at := range forgotten {
		if expired(at, now) {
			dropped = true
			continue
		}
		if e, ok := s.byChat[chat]; ok {
			if e.Value.(*record).UpdatedAt.After(at) {
				dropped = true // set after the Forget
				continue
			}
			s.lru.Remove(e)
			delete(s.byChat, chat)
			delete(s.saved, chat)
			dropped = true
		}
		if was, ok := s.gone[chat]; !ok || at.After(was) {
			s.gone[chat] = at
		}
	}
	return dropped
}

// sortLocked orders the places by UpdatedAt, then by chat, so that every
// window orders the same places alike and evicts the same ones.
func (s *Store) sortLocked() {
	recs := make([]*record, 0, s.lru.Len())
	for e := s.lru.Front(); e != nil; e = e.Next() {
		recs = append(recs, e.Value.(*record))
	}
	slices.SortFunc(recs, func(a, b *record) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Chat, b.Chat)
	})
	s.lru.Init()
	for _, r := range recs {
		s.byChat[r.Chat] = s.lru.PushBack(r)
	}
}

// pruneLocked drops the tombstones older than tombstoneTTL, from memory
// as from the next save, so that no window keeps fighting for a Forget the
// file no longer holds. Caller holds mu.
func (s *Store) pruneLocked(now time.Time) {
	maps.DeleteFunc(s.gone, func(_ string, at time.Time) bool { return expired(at, now) })
}

func expired(at, now time.Time) bool { return at.Before(now.Add(-tombstoneTTL)) }

// placesLocked returns every place by chat. Caller holds mu.
func (s *Store) placesLocked() map[string]Anchor {
	m := make(map[string]Anchor, len(s.byChat))
	for chat, e := range s.byChat {
		m[chat] = e.Value.(*record).Anchor
	}
	return m
}

// samePlace reports whether a and b are the same place, as a JSON round
// trip leaves them (UpdatedAt may come back in another location).
func samePlace(a, b Anchor) bool {
	return a.Item == b.Item && a.Offset == b.Offset && a.UpdatedAt.Equal(b.UpdatedAt)
}

// diff returns, sorted, the chats whose place differs between before and
// after.
func diff(before, after map[string]Anchor) []string {
	var chats []string
	for chat, a := range after {
		if b, ok := before[chat]; !ok || !samePlace(a, b) {
			chats = append(chats, chat)
		}
	}
	for chat := range before {
		if _, ok := after[chat]; !ok {
			chats = append(chats, chat)
		}
	}
	slices.Sort(chats)
	return chats
}
