package drafts

import (
	"maps"
	"slices"
	"time"

	"github.com/offmain/offmain/internal/keyed"
)

// merge applies what another process saved, tab by tab, the later
// UpdatedAt winning (the file's on a tie). It returns the tabs whose draft
// changed, sorted, and whether the file lacks something memory has (a
// draft, or a delete newer than the file's draft), which only a save tells
// the other windows.
func (s *Store) merge(data fileData, now time.Time) (tabs []string, resave bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keyed.Prune(s.gone, now)
	before := maps.Clone(s.drafts)
	for tab, d := range data.Drafts {
		if d.empty() {
			continue
		}
		if mine, ok := s.drafts[tab]; ok && mine.UpdatedAt.After(d.UpdatedAt) {
			continue // edited here since: the save below tells them
		}
		if at, ok := s.gone[tab]; ok && at.After(d.UpdatedAt) {
			resave = true // deleted here since
			continue
		}
		s.drafts[tab] = d
		delete(s.gone, tab)
		delete(s.saved, tab) // their draft: an edit back to ours is a new edit
	}
	for tab, at := range data.Deleted {
		if keyed.Expired(at, now) {
			continue
		}
		if mine, ok := s.drafts[tab]; ok {
			if mine.UpdatedAt.After(at) {
				continue // edited here after their delete
			}
			delete(s.drafts, tab)
			delete(s.saved, tab)
		}
		if was, ok := s.gone[tab]; !ok || at.After(was) {
			s.gone[tab] = at
		}
	}
	for tab, mine := range s.drafts {
		if theirs, ok := data.Drafts[tab]; !ok || !same(mine, theirs) {
			resave = true // missing from their save, or newer here
			break
		}
	}
	return keyed.Diff(before, s.drafts, same), resave
}

// loadTombstones takes the file's tombstones at the read, the newer winning
// against a draft of the same tab (a file this package writes never holds
// both). It reports whether it dropped anything, a draft or a tombstone
// (expired, or older than the draft), so that the file is rewritten.
func (s *Store) loadTombstones(deleted map[string]time.Time, now time.Time) (dropped bool) {
	for tab, at := range deleted {
		d, ok := s.drafts[tab]
		if keyed.Expired(at, now) || (ok && d.UpdatedAt.After(at)) {
			dropped = true
			continue
		}
		if ok {
			delete(s.drafts, tab)
			dropped = true
		}
		s.gone[tab] = at
	}
	return dropped
}

// same reports whether a and b are the same draft, as a JSON round trip
// leaves them (UpdatedAt may come back in another location).
func same(a, b Draft) bool {
	return a.Text == b.Text && slices.Equal(a.Attachments, b.Attachments) && a.UpdatedAt.Equal(b.UpdatedAt)
}
