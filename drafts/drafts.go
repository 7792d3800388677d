package drafts

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/offmain/offmain/internal/keyed"
	"github.com/offmain/offmain/internal/settle"
)

// Draft is one tab's unsent message.
type Draft struct {
	Text string `json:"text"`
	// Attachments are the paths of the files attached to the draft. The
	// store keeps paths only, never the files' contents.
	Attachments []string `json:"attachments,omitempty"`
	// UpdatedAt is when the draft last changed; [Options.MaxAge] counts
	// from it.
	UpdatedAt time.Time `json:"updated_at"`
}

// empty reports whether d holds nothing worth keeping.
func (d Draft) empty() bool { return d.Text == "" && len(d.Attachments) == 0 }

// fileData is the JSON file: {"version":1,"drafts":{"<tab>":{...}}}, and
// from a watching Store also "deleted":{"<tab>":"<time>"}.
type fileData struct {
	Version int              `json:"version"`
	Drafts  map[string]Draft `json:"drafts"`
	// Deleted holds the tombstones: when each tab's draft was deleted, for
	// the tabs deleted within keyed.TombstoneTTL. Only a watching Store
	// writes it.
	Deleted map[string]time.Time `json:"deleted,omitempty"`
}

const fileVersion = 1

// file is what the Store needs of a *statefile.File[fileData]; tests
// replace it to control when the read returns, see when saves are queued
// and deliver changes.
type file = keyed.File[fileData]

// Store holds the drafts of all tabs. Its methods are safe for concurrent
// use from any goroutine. Set, Put, Delete, Get, Tabs and Loaded never
// wait on the disk, so the GUI's main goroutine may call them; Load, Flush
// and Close wait, under a context.
type Store struct {
	// core reads, saves, flushes and watches the file; sched is its
	// scheduler, which every edit marks.
	core  *keyed.Core[fileData]
	sched *settle.Scheduler
	opts  Options

	mu sync.Mutex // protects the fields below, and core's state
	// drafts is the current state. Its Attachments slices are never changed
	// in place (Put stores a copy), so a shallow maps.Clone shares nothing
	// the writer could see change.
	drafts map[string]Draft
	// gone holds the tombstones (see the package documentation) when the
	// Store watches, and is nil when it does not.
	gone map[string]time.Time
	// touched holds the tabs set, put or deleted since Open, before the
	// read landed: the file's drafts of those tabs are older. Nil after it.
	touched map[string]bool
	// saved holds each tab's draft as the last save handed it to
	// statefile, for Set to tell an undone edit (see Set). A tab whose
	// draft a merge or a delete changed since is not in it.
	saved map[string]Draft
	// expired holds the drafts the read dropped for their age, until
	// OnExpire has them.
	expired map[string]Draft
}

// Set sets tab's draft text, keeping its attachments, and stamps UpdatedAt.
// A draft left with no text and no attachments is deleted. Setting the text
// a draft already has changes nothing. Setting it back to the text the last
// save wrote (an edit undone before the settle) restores that save's
// UpdatedAt too, so the next save hands statefile the bytes the file holds
// and writes nothing. Set returns at once: the save is queued later (see
// the package documentation).
func (s *Store) Set(tab, text string) {
	s.mu.Lock()
	d, ok := s.drafts[tab]
	if d.Text == text && (ok || text == "") {
		s.mu.Unlock()
		return
	}
	d.Text = text
	d.UpdatedAt = time.Time{}
	if sv, ok := s.saved[tab]; ok && sv.Text == text && slices.Equal(sv.Attachments, d.Attachments) {
		d = sv // undone: the draft is what the file holds
	}
	s.putLocked(tab, d)
	s.mu.Unlock()
	s.sched.Mark()
}

// Put replaces tab's whole draft with a copy of d. A zero d.UpdatedAt means
// now. A draft with no text and no attachments deletes tab's draft.
func (s *Store) Put(tab string, d Draft) {
	d.Attachments = slices.Clone(d.Attachments)
	s.mu.Lock()
	s.putLocked(tab, d)
	s.mu.Unlock()
	s.sched.Mark()
}

func (s *Store) putLocked(tab string, d Draft) {
	if d.UpdatedAt.IsZero() {
		// UTC drops the monotonic reading, so what Get returns equals
		// what a fresh Store reads back from the JSON.
		d.UpdatedAt = time.Now().UTC()
	}
	if s.touched != nil {
		s.touched[tab] = true
	}
	if d.empty() {
		s.deleteLocked(tab, d.UpdatedAt)
		return
	}
	s.drafts[tab] = d
	delete(s.gone, tab)
}

// Delete removes tab's draft, if any. When the last draft goes, the next
// save removes the file (for a watching Store, see the package
// documentation).
func (s *Store) Delete(tab string) {
	at := time.Now().UTC()
	s.mu.Lock()
	ok := s.deleteLocked(tab, at)
	if s.touched != nil { // the unread file may hold a draft of tab
		s.touched[tab] = true
		if !ok && s.gone != nil {
			s.gone[tab] = at
		}
		ok = true
	}
	s.mu.Unlock()
	if ok {
		s.sched.Mark()
	}
}

// deleteLocked removes tab's draft, if any, and when the Store watches
// records the delete's time as the tab's tombstone. It reports whether
// there was a draft.
func (s *Store) deleteLocked(tab string, at time.Time) bool {
	if _, ok := s.drafts[tab]; !ok {
		return false
	}
	delete(s.drafts, tab)
	delete(s.saved, tab) // a draft set again is newer than the delete
	if s.gone != nil {
		s.gone[tab] = at
	}
	return true
}

// Get returns a copy of tab's draft and whether there is one. It answers
// from memory and never waits on the disk: until the file's read has landed
// ([Store.Loaded] is closed) it knows only the drafts set since Open.
func (s *Store) Get(tab string) (Draft, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.drafts[tab]
	d.Attachments = slices.Clone(d.Attachments)
	return d, ok
}

// Tabs returns the tabs that have a draft, sorted. Like Get, it answers
// from memory; before the read has landed it lists only the tabs set since
// Open.
func (s *Store) Tabs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.drafts))
}

// snapshotLocked is what a save writes: a copy of the drafts (and
// tombstones), or nothing when there are none, and the file is removed.
// It notes the drafts in saved, for Set, in the same critical section: noted
// later, after the hand-over to statefile, a Delete in between would be
// forgotten, and the draft typed again would take the deleted one's time.
// Caller holds mu.
func (s *Store) snapshotLocked(now time.Time) (fileData, bool) {
	keyed.Prune(s.gone, now)
	if len(s.drafts) == 0 && len(s.gone) == 0 {
		s.saved = nil
		return fileData{}, false
	}
	snap := fileData{Version: fileVersion, Drafts: maps.Clone(s.drafts)}
	if len(s.gone) > 0 {
		snap.Deleted = maps.Clone(s.gone)
	}
	s.saved = maps.Clone(snap.Drafts) // its own: deletes must not touch what statefile encodes
	return snap, true
}

// Flush queues any unsaved edit now, then waits until the drafts file has
// reached the disk or ctx ends. If the file has not been read yet, it waits
// for the read first (a save needs the file's drafts), and if the read
// failed it reads again at once. It returns statefile's error (a
// *statefile.NotDrainedError naming the path when ctx ended first or the
// save failed), an error wrapping ctx's when the read did not finish in
// time, an error saying the edits are not saved when the file still cannot
// be read or a newer release wrote it, and one matching
// statefile.ErrClosed when the last edit could not be queued. With no edit
// since Open it has nothing to save, and returns nil while the file cannot
// be read.
func (s *Store) Flush(ctx context.Context) error { return s.core.Flush(ctx) }

// Close stops the watch, if any (waiting for a call of [Options.OnChange]
// in progress, so OnChange must not call Close), stops the settle timer,
// queues any unsaved edit, and waits for the file like [Store.Flush]. If
// the file is still being read when ctx ends, the save is queued when the
// read finishes, and no watch starts; a read that failed is tried once more
// by Close, and no more after it. After Close the Store still answers
// Get and Tabs, and Set, Put and Delete still change memory, but nothing
// more is saved or merged. Close does not close the statefile.Store, which
// may hold other files. A second Close only waits for the file again. A
// Flush called while Close queues the last edit returns only after it is
// queued.
func (s *Store) Close(ctx context.Context) error { return s.core.Close(ctx) }
