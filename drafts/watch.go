package drafts

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/offmain/offmain/internal/mirror"
)

// tombstoneTTL is how long a watching Store keeps, and writes, a deleted
// tab's tombstone. It must outlast the time another window can go without
// merging the file, or that window's next save brings the draft back:
// statefile reports a change within a second of its last event, so an hour
// leaves room for a disk that hangs or a laptop that sleeps mid-merge,
// while a file with no draft left is still removed the same day.
const tombstoneTTL = time.Hour

// startWatch starts the watch once the file has been read, unless Close
// came first. A save by another window between the read and this is seen
// with the next change of the file (by either window: a save missing a
// draft gets it written back). Order: watchMu, then mu.
func (s *Store) startWatch() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.closed {
		return
	}
	stop, err := s.file.Watch(s.changed)
	if err != nil {
		s.mu.Lock()
		s.watchErr = fmt.Errorf("drafts: not watching: %w", err)
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

// merge applies what another process saved, tab by tab, the later
// UpdatedAt winning (the file's on a tie). It returns the tabs whose draft
// changed, sorted, and whether the file lacks something memory has (a
// draft, or a delete newer than the file's draft), which only a save tells
// the other windows.
func (s *Store) merge(data fileData, now time.Time) (tabs []string, resave bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(now)
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
		if expired(at, now) {
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
	return diff(before, s.drafts), resave
}

// loadTombstones takes the file's tombstones at the read, the newer winning
// against a draft of the same tab (a file this package writes never holds
// both). It reports whether it dropped anything, a draft or a tombstone
// (expired, or older than the draft), so that the file is rewritten.
func (s *Store) loadTombstones(deleted map[string]time.Time, now time.Time) (dropped bool) {
	for tab, at := range deleted {
		d, ok := s.drafts[tab]
		if expired(at, now) || (ok && d.UpdatedAt.After(at)) {
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

// pruneLocked drops the tombstones older than tombstoneTTL, from memory
// as from the next save, so that no window keeps fighting for a delete the
// file no longer holds. Caller holds mu.
func (s *Store) pruneLocked(now time.Time) {
	maps.DeleteFunc(s.gone, func(_ string, at time.Time) bool { return expired(at, now) })
}

func expired(at, now time.Time) bool { return at.Before(now.Add(-tombstoneTTL)) }

// same reports whether a and b are the same draft, as a JSON round trip
// leaves them (UpdatedAt may come back in another location).
func same(a, b Draft) bool {
	return a.Text == b.Text && slices.Equal(a.Attachments, b.Attachments) && a.UpdatedAt.Equal(b.UpdatedAt)
}

// diff returns, sorted, the tabs whose draft differs between before and
// after.
func diff(before, after map[string]Draft) []string {
	var tabs []string
	for tab, d := range after {
		if b, ok := before[tab]; !ok || !same(b, d) {
			tabs = append(tabs, tab)
		}
	}
	for tab := range before {
		if _, ok := after[tab]; !ok {
			tabs = append(tabs, tab)
		}
	}
	slices.Sort(tabs)
	return tabs
}
