package drafts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/offmain/offmain/internal/settle"
	"github.com/offmain/offmain/statefile"
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
	// the tabs deleted within tombstoneTTL. Only a watching Store writes it.
	Deleted map[string]time.Time `json:"deleted,omitempty"`
}

const fileVersion = 1

// file is what the Store needs of a *statefile.File[fileData]; tests
// replace it to see when saves are queued and to deliver changes.
type file interface {
	Save(fileData) error
	Remove() error
	LoadContext(ctx context.Context) (fileData, error)
	Flush(ctx context.Context) error
	Watch(fn func(fileData, error)) (stop func(), err error)
}

// Store holds the drafts of all tabs. Its methods are safe for concurrent
// use from any goroutine; Set, Put, Delete, Get and Tabs never touch the disk.
type Store struct {
	file      file
	sched     *settle.Scheduler
	onChange  func(tabs []string) // Options.OnChange; nil: none
	stopWatch func()              // ends the watch; nil when not watching. Set by open only.

	mu sync.Mutex // protects drafts, gone, saved and lost
	// drafts is the current state. Its Attachments slices are never changed
	// in place (Put stores a copy), so a shallow maps.Clone shares nothing
	// the writer could see change.
	drafts map[string]Draft
	// gone holds the tombstones (see the package documentation) when the
	// Store watches, and is nil when it does not.
	gone map[string]time.Time
	lost error // why the last save could not be queued (statefile.ErrClosed)
	// saved holds each tab's draft as the last save handed it to
	// statefile, for Set to tell an undone edit (see Set). A tab whose
	// draft a merge or a delete changed since is not in it.
	saved map[string]Draft
}

// Open opens the drafts file at path in st and reads it once, after any
// saves already queued on that path in st. Drafts older than
// [Options.MaxAge] are dropped (and the file is rewritten without them).
//
// With no file, the store starts empty. A file that does not parse is kept
// aside by statefile and the store starts empty: Open then returns a usable
// Store together with an error for which errors.Is(err, statefile.ErrCorrupt)
// holds (errors.As finds the *statefile.CorruptError that says where the
// bytes went). Any other read failure returns a nil Store and the error, so
// that a file that could not be read is never overwritten.
//
// With [Options.Watch], Open starts watching the file once it has read it.
// If the watch cannot start (the inotify limits, say), Open still returns
// the usable Store, which then does not watch, with an error saying so. In
// short: a non-nil Store with a non-nil error works; log the error.
func Open(st *statefile.Store, path string, opts Options) (*Store, error) {
	return OpenContext(context.Background(), st, path, opts)
}

// OpenContext is [Open] that gives up waiting for the file's read when ctx
// ends, returning a nil Store and an error wrapping ctx's, so that an app
// can start without its drafts rather than hang on a disk that does not
// answer. The read stays queued in statefile and its result is dropped.
func OpenContext(ctx context.Context, st *statefile.Store, path string, opts Options) (*Store, error) {
	f, err := statefile.Open[fileData](st, path)
	if err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	return open(ctx, f, opts)
}

func open(ctx context.Context, f file, opts Options) (*Store, error) {
	s := &Store{file: f, drafts: map[string]Draft{}, onChange: opts.OnChange}
	if opts.watch() {
		s.gone = map[string]time.Time{}
	}
	s.sched = settle.New(opts.settle(), s.save)
	data, err := f.LoadContext(ctx)
	var warn error
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist): // no drafts yet
	case errors.Is(err, statefile.ErrCorrupt):
		warn = fmt.Errorf("drafts: starting empty: %w", err)
	default:
		return nil, fmt.Errorf("drafts: %w", err)
	}
	now := time.Now()
	cutoff, expire := opts.cutoff(now)
	dropped := false
	for tab, d := range data.Drafts {
		if d.empty() || (expire && d.UpdatedAt.Before(cutoff)) {
			dropped = true
			continue
		}
		s.drafts[tab] = d
	}
	if s.gone != nil && s.loadTombstones(data.Deleted, now) {
		dropped = true
	}
	if dropped {
		s.sched.Mark() // rewrite the file without them
	}
	if s.gone != nil {
		if err := s.startWatch(); err != nil {
			warn = errors.Join(warn, err)
		}
	}
	return s, warn
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
	s.mu.Lock()
	ok := s.deleteLocked(tab, time.Now().UTC())
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

// Get returns a copy of tab's draft and whether there is one.
func (s *Store) Get(tab string) (Draft, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.drafts[tab]
	d.Attachments = slices.Clone(d.Attachments)
	return d, ok
}

// Tabs returns the tabs that have a draft, sorted.
func (s *Store) Tabs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.drafts))
}

// save is the scheduler's callback: it hands statefile a copy of the drafts
// (and tombstones), or removes the file when there are none. Calls never
// overlap (settle runs one at a time, Close's last one included), so saves
// are queued in the order of the states they copy.
func (s *Store) save() {
	s.mu.Lock()
	s.pruneLocked(time.Now())
	var snap fileData
	if len(s.drafts) > 0 || len(s.gone) > 0 {
		snap = fileData{Version: fileVersion, Drafts: maps.Clone(s.drafts)}
		if len(s.gone) > 0 {
			snap.Deleted = maps.Clone(s.gone)
		}
	}
	s.mu.Unlock()
	var err error
	if snap.Drafts == nil {
		err = s.file.Remove()
	} else {
		err = s.file.Save(snap)
	}
	s.mu.Lock()
	s.lost = err
	s.saved = maps.Clone(snap.Drafts) // its own: deletes must not touch what statefile encodes
	s.mu.Unlock()
}

// Flush queues any unsaved edit now, then waits until the drafts file has
// reached the disk or ctx ends. It returns statefile's error (a
// *statefile.NotDrainedError naming the path when ctx ended first or the
// save failed), joined with an error matching statefile.ErrClosed if the
// statefile.Store was closed before the last edit could be queued.
func (s *Store) Flush(ctx context.Context) error {
	s.sched.Flush()
	err := s.file.Flush(ctx)
	s.mu.Lock()
	lost := s.lost
	s.mu.Unlock()
	if lost != nil {
		err = errors.Join(fmt.Errorf("drafts: last edit not saved: %w", lost), err)
	}
	return err
}

// Close stops the watch, if any (waiting for a call of [Options.OnChange]
// in progress, so OnChange must not call Close), stops the settle timer,
// queues any unsaved edit, and waits for the file like [Store.Flush]. After
// Close the Store still answers Get and Tabs, and Set, Put and Delete still
// change memory, but nothing more is saved or merged. Close does not close
// the statefile.Store, which may hold other files. A second Close only
// waits for the file again. A Flush called while Close queues the last edit
// returns only after it is queued.
func (s *Store) Close(ctx context.Context) error {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.sched.Close()
	return s.Flush(ctx)
}
