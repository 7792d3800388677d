package anchors

import (
	"container/list"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/offmain/offmain/internal/keyed"
	"github.com/offmain/offmain/internal/settle"
	"github.com/offmain/offmain/statefile"
)

// Anchor is a scroll place: the item at the top of the view and how far into
// it the view starts.
type Anchor struct {
	// Item identifies the item (a message) at the top of the view.
	Item string `json:"item"`
	// Offset is how far into Item the view starts, in the caller's units
	// (pixels, say). Resolving it by item rather than by absolute position
	// keeps the place right when items above it load or change height.
	Offset float64 `json:"offset"`
	// UpdatedAt is when the place was set; Set fills a zero one with now.
	UpdatedAt time.Time `json:"updated_at"`
}

// record is one place in the file. The file lists them least recently set
// first: {"version":1,"anchors":[{"chat":"c1","item":"m9","offset":12.5,...}]}.
type record struct {
	Chat string `json:"chat"`
	Anchor
}

type fileData struct {
	Version int      `json:"version"`
	Anchors []record `json:"anchors"`
	// Forgotten holds the tombstones: when each chat was forgotten, for the
	// chats forgotten within keyed.TombstoneTTL. Only a watching Store
	// writes it.
	Forgotten map[string]time.Time `json:"forgotten,omitempty"`
}

const fileVersion = 1

// file is what the Store needs of a *statefile.File[fileData]; tests
// replace it to control when the read returns, see what is saved and
// deliver changes.
type file = keyed.File[fileData]

// Store holds the scroll places of up to Max chats. Its methods are safe for
// concurrent use from any goroutine. Set, Forget, Get, Len and Loaded never
// wait on the disk, so the GUI's main goroutine may call them; Load, Flush
// and Close wait, under a context.
type Store struct {
	// core reads, saves, flushes and watches the file; sched is its
	// scheduler, which every Set and Forget marks.
	core  *keyed.Core[fileData]
	sched *settle.Scheduler
	max   int

	mu     sync.Mutex               // protects the fields below, and core's state
	lru    list.List                // of *record, least recently set first
	byChat map[string]*list.Element // the lru element of each chat
	forgot map[string]bool          // chats forgotten before the read; nil after it
	// gone holds the tombstones (see the package documentation) when the
	// Store watches, and is nil when it does not.
	gone map[string]time.Time
	// saved holds each chat's place as the last save handed it to
	// statefile, for Set to tell a scroll back to it (see Set). A chat
	// that a merge or a Forget changed since is not in it.
	saved map[string]Anchor
}

// Open returns the Store for the anchors file at path in st. It does not
// touch the disk and does not wait: it queues the file's read (see the
// package documentation and [Store.Load]; the statefile.Store's OnError
// hears of what it met too, through statefile.Store.Report), and with
// [Options.Watch] the watch starts after that read. The only errors are statefile.Open's, such as
// statefile.ErrClosed; the Store is then nil.
func Open(st *statefile.Store, path string, opts Options) (*Store, error) {
	f, err := statefile.OpenWith(st, path, statefile.FileOptions[fileData]{Migrations: formatHistory})
	if err != nil {
		return nil, fmt.Errorf("anchors: %w", err)
	}
	return open(f, opts, st.Report), nil
}

// formatHistory is the file format's versions (see "The file" in the
// package documentation). It has no step to run yet; declaring version 1
// makes statefile refuse a file a newer release wrote (a higher "version",
// statefile.ErrNewerVersion), which the Store then never saves over, so
// going back to an older release never destroys a newer file.
var formatHistory = []statefile.Migration{{Version: 1, Migrate: func(b []byte) ([]byte, error) { return b, nil }}}

func open(f file, opts Options, report func(error)) *Store {
	s := &Store{
		max:    opts.max(),
		byChat: map[string]*list.Element{},
		forgot: map[string]bool{},
	}
	if opts.watch() {
		s.gone = map[string]time.Time{}
	}
	s.core = keyed.New(f, &s.mu, keyed.Config[fileData]{
		Name: "anchors", Unit: "place",
		Settle: opts.settle(), Watch: opts.watch(),
		Read: s.readLocked, Snapshot: s.snapshotLocked,
		Merge: s.merge, OnChange: opts.OnChange, Report: report,
	})
	s.sched = s.core.Scheduler()
	return s
}

// Set records chat's place, making it the most recently set, and queues a
// save once Sets settle. A zero a.UpdatedAt means now. An Offset that JSON
// cannot hold (NaN, ±Inf) is stored as 0, so one bad value never makes the
// whole file unsavable. If chat is new and Max places are kept already, the
// least recently set is evicted. A Set with a zero UpdatedAt back to the
// place the last save wrote for chat (a scroll away and back before the
// settle) keeps that save's UpdatedAt, so the next save hands statefile the
// bytes the file holds and writes nothing.
func (s *Store) Set(chat string, a Anchor) {
	if math.IsNaN(a.Offset) || math.IsInf(a.Offset, 0) {
		a.Offset = 0
	}
	stamp := a.UpdatedAt.IsZero()
	if stamp {
		a.UpdatedAt = time.Now().UTC() // UTC: no monotonic reading, equal after a JSON round trip
	}
	s.mu.Lock()
	if sv, ok := s.saved[chat]; ok && stamp && sv.Item == a.Item && sv.Offset == a.Offset {
		a = sv // back to what the file holds
	}
	if e, ok := s.byChat[chat]; ok {
		e.Value.(*record).Anchor = a
		s.lru.MoveToBack(e)
	} else {
		s.byChat[chat] = s.lru.PushBack(&record{Chat: chat, Anchor: a})
		s.evictLocked()
	}
	if s.forgot != nil {
		delete(s.forgot, chat)
	}
	delete(s.gone, chat)
	s.mu.Unlock()
	s.sched.Mark()
}

// Forget drops chat's place (a chat that was deleted). A watching Store
// also records a tombstone, so that other windows drop the chat's place too,
// even when this one had none.
func (s *Store) Forget(chat string) {
	s.mu.Lock()
	e, ok := s.byChat[chat]
	if ok {
		s.lru.Remove(e)
		delete(s.byChat, chat)
	}
	delete(s.saved, chat) // a place set again is newer than the Forget
	if s.forgot != nil {  // the file may still hold it
		s.forgot[chat] = true
		ok = true
	}
	if s.gone != nil { // other windows may hold it
		s.gone[chat] = time.Now().UTC()
		ok = true
	}
	s.mu.Unlock()
	if ok {
		s.sched.Mark()
	}
}

// Get returns chat's place and whether there is one. It answers from memory
// at once and never waits on the disk, so it is safe on the GUI goroutine
// even when the disk hangs. Until the file's read has landed
// ([Store.Loaded] is closed), Get knows only the places set since Open and
// returns false for the others. Get does not make chat recently set.
func (s *Store) Get(chat string) (Anchor, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byChat[chat]
	if !ok {
		return Anchor{}, false
	}
	return e.Value.(*record).Anchor, true
}

// Len returns how many places are kept. Before the file is read it counts
// only the places set since Open.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}

// evictLocked drops the least recently set places beyond max.
func (s *Store) evictLocked() {
	for s.lru.Len() > s.max {
		e := s.lru.Front()
		s.lru.Remove(e)
		delete(s.byChat, e.Value.(*record).Chat)
	}
}
