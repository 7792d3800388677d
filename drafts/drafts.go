// Package drafts keeps a composer's unsent drafts, one per tab, in one JSON
// state file, without ever making the caller wait on the disk.
//
// [Store.Set] is meant to be called on every edit, from the GUI's main
// goroutine: it changes memory and marks the store dirty. A save is queued
// through [statefile] once the edits pause for [Options.Settle], and no later
// than [Options.MaxWait] after the first unsaved edit, so a person typing
// without pause still has their text on disk every few seconds. Encoding and
// every disk operation happen on statefile's writer.
//
// At quit, call [Store.Close] (or [Store.Flush], or add the Store to a
// flush.Hook): it queues the last edit at once and waits for it under a
// deadline.
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

// fileData is the JSON file: {"version":1,"drafts":{"<tab>":{...}}}.
type fileData struct {
	Version int              `json:"version"`
	Drafts  map[string]Draft `json:"drafts"`
}

const fileVersion = 1

// file is what the Store needs of a *statefile.File[fileData]; tests
// replace it to see when saves are queued.
type file interface {
	Save(fileData) error
	Remove() error
	LoadContext(ctx context.Context) (fileData, error)
	Flush(ctx context.Context) error
}

// Store holds the drafts of all tabs. Its methods are safe for concurrent
// use from any goroutine; Set, Put, Delete, Get and Tabs never touch the disk.
type Store struct {
	file  file
	sched *settle.Scheduler

	mu sync.Mutex // protects drafts and lost
	// drafts is the current state. Its Attachments slices are never changed
	// in place (Put stores a copy), so a shallow maps.Clone shares nothing
	// the writer could see change.
	drafts map[string]Draft
	lost   error // why the last save could not be queued (statefile.ErrClosed)
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
	s := &Store{file: f, drafts: map[string]Draft{}}
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
	cutoff, expire := opts.cutoff(time.Now())
	dropped := false
	for tab, d := range data.Drafts {
		if d.empty() || (expire && d.UpdatedAt.Before(cutoff)) {
			dropped = true
			continue
		}
		s.drafts[tab] = d
	}
	if dropped {
		s.sched.Mark() // rewrite the file without them
	}
	return s, warn
}

// Set sets tab's draft text, keeping its attachments, and stamps UpdatedAt.
// A draft left with no text and no attachments is deleted. Setting the text
// a draft already has changes nothing. Set returns at once: the save is
// queued later (see the package documentation).
func (s *Store) Set(tab, text string) {
	s.mu.Lock()
	d, ok := s.drafts[tab]
	if d.Text == text && (ok || text == "") {
		s.mu.Unlock()
		return
	}
	d.Text = text
	d.UpdatedAt = time.Time{}
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
	if d.empty() {
		delete(s.drafts, tab)
		return
	}
	if d.UpdatedAt.IsZero() {
		// UTC drops the monotonic reading, so what Get returns equals
		// what a fresh Store reads back from the JSON.
		d.UpdatedAt = time.Now().UTC()
	}
	s.drafts[tab] = d
}

// Delete removes tab's draft, if any. When the last draft goes, the next
// save removes the file.
func (s *Store) Delete(tab string) {
	s.mu.Lock()
	_, ok := s.drafts[tab]
	delete(s.drafts, tab)
	s.mu.Unlock()
	if ok {
		s.sched.Mark()
	}
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

// save is the scheduler's callback: it hands statefile a copy of the drafts,
// or removes the file when there are none. Calls never overlap (settle runs
// one at a time, Close's last one included), so saves are queued in the
// order of the states they copy.
func (s *Store) save() {
	s.mu.Lock()
	var snap map[string]Draft
	if len(s.drafts) > 0 {
		snap = maps.Clone(s.drafts)
	}
	s.mu.Unlock()
	var err error
	if snap == nil {
		err = s.file.Remove()
	} else {
		err = s.file.Save(fileData{Version: fileVersion, Drafts: snap})
	}
	s.mu.Lock()
	s.lost = err
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

// Close stops the settle timer, queues any unsaved edit, and waits for the
// file like [Store.Flush]. After Close the Store still answers Get and Tabs,
// and Set, Put and Delete still change memory, but nothing more is saved.
// Close does not close the statefile.Store, which may hold other files.
// A second Close only waits for the file again. A Flush called while Close
// queues the last edit returns only after it is queued.
func (s *Store) Close(ctx context.Context) error {
	s.sched.Close()
	return s.Flush(ctx)
}
