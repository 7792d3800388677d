package anchors

import (
	"slices"
	"strings"
	"time"

	"github.com/offmain/offmain/internal/keyed"
)

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
	keyed.Prune(s.gone, now)
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
	return keyed.Diff(before, s.placesLocked(), samePlace), resave
}

// forgetLocked applies the file's tombstones: a place set before its chat's
// tombstone goes, and the newer tombstone of a chat is kept. It reports
// whether it dropped anything, a place or a tombstone (expired, or older
// than the chat's place), so that the read rewrites the file.
func (s *Store) forgetLocked(forgotten map[string]time.Time, now time.Time) (dropped bool) {
	for chat, at := range forgotten {
		if keyed.Expired(at, now) {
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
