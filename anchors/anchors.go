// Package anchors keeps each chat's scroll place, the item at the top of the
// transcript's view and the offset into it, in one JSON state file, without
// ever making the caller wait on the disk to save.
//
// Call [Store.Set] on every settled scroll, from the GUI's main goroutine:
// it changes memory and returns. A save is queued through [statefile] once
// the Sets pause for [Options.Settle] (no later than [Options.MaxWait]), and
// encoding and disk I/O run on statefile's writer. At most [Options.Max]
// places are kept; the least recently set goes first.
//
// [Open] does not touch the disk either: it queues the file's read on
// statefile's writer for the path, behind any saves already queued there,
// and returns. Get never waits for it: until it lands ([Store.Loaded]
// closes) Get knows only the places set since Open, which win over the
// file's, so a GUI restores a place from the file once Loaded is closed, or
// reads it with [Store.GetContext] off its main goroutine. Saves wait for
// the read, as a save before it would drop the file's places. What the
// read met arrives through [Store.Load], which waits under a context: call
// it off the GUI goroutine and log its error, or use [OpenContext] where
// waiting is fine. drafts works the same way.
//
// # Several windows
//
// With [Options.Watch], a Store follows the file as other processes (a
// second window of the app) save it, through statefile's File.Watch, which
// never reports this Store's own saves. The watch starts once the file has
// been read. What the others saved is merged chat by chat, and the place
// with the later UpdatedAt wins (the file's on a tie), so a place set here,
// saved or not, is never replaced by an older one; [Options.OnChange] is
// then told which chats' places changed. Once places come from other
// windows, recency is by UpdatedAt: after a merge the places are ordered by
// it, and the oldest beyond [Options.Max] are evicted, as every window
// does, so windows with the same Max keep the same places.
//
// Each save writes every place, so a window that saves before it has merged
// another's newest save leaves that save's new places out, without meaning
// to forget them. A place missing from the file is therefore kept, and
// written back. Forgets travel instead as tombstones: a watching Store
// writes when each chat was forgotten ("forgotten" in the JSON) for an
// hour, and drops any place of that chat set before it. While such a
// tombstone is kept the file stays, even with no place left. A file that
// someone else removed forgets nothing: the Store writes its places back.
// A file whose bytes do not parse (another program may still be writing
// it) is left where it is: the Store keeps its places and does not save
// over it; its next save, after a Set or Forget, has statefile move those
// bytes aside first.
//
// # The file
//
// Each save writes the whole file: JSON as encoding/json writes it, on one
// line. Laid out for reading, a file with two places:
//
//	{
//	  "version": 1,
//	  "anchors": [
//	    {
//	      "chat": "chat-1",
//	      "item": "msg-9",
//	      "offset": 12.5,
//	      "updated_at": "2026-03-02T09:15:04.123456789Z"
//	    },
//	    {
//	      "chat": "chat-2",
//	      "item": "msg-120",
//	      "offset": 0,
//	      "updated_at": "2026-03-02T09:16:00Z"
//	    }
//	  ]
//	}
//
// Its fields:
//
//   - "version" is 1, the only format so far.
//   - "anchors" lists one place per chat, least recently set first, which is
//     the order a reader takes as recency: "chat"; the [Anchor] fields
//     "item", "offset" (a JSON number, never NaN or infinite) and
//     "updated_at", an RFC 3339 time (UTC when the Store stamped it). A
//     reader keeps at most [Options.Max] places, the last ones listed.
//   - "forgotten", written only by a Store with [Options.Watch], maps a chat
//     to when it was forgotten: {"chat-3": "2026-03-02T09:17:00Z"}. A Store
//     without Watch ignores it.
//   - With nothing left to write, the file is removed rather than saved
//     empty.
//
// Readers ignore fields they do not know. A file whose "version" is higher
// than 1, written by a newer release, is never read as version 1 nor saved
// over: [Store.Load] returns an error matching statefile.ErrNewerVersion and
// the Store keeps its places in memory only, so running an older release of
// an app over a newer file never destroys it. A file without "version" is
// read as version 1.
//
// A file that does not decode into this shape (empty, cut short, "anchors"
// not a list) is renamed by statefile to "<name>.corrupt-<UTC time>" beside
// it when the directory allows (statefile keeps the newest few such copies,
// see statefile.Options.MaxCorrupt); [Store.Load] returns an error matching
// statefile.ErrCorrupt and the Store starts empty and saves as usual. After
// any other read error (EACCES, EIO) the Store works in memory but never
// saves, so a file that could not be read is never overwritten; Load and
// Flush return that error.
//
// # Stability
//
// The module is v0, so the API may still change; every change is listed in
// the repository's CHANGELOG.md. The file is the users' data: a release
// that changes its format writes a higher "version" and still reads every
// earlier version, so places saved by one release survive the next.
package anchors

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

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
	// chats forgotten within tombstoneTTL. Only a watching Store writes it.
	Forgotten map[string]time.Time `json:"forgotten,omitempty"`
}

const fileVersion = 1

// file is what the Store needs of a *statefile.File[fileData]; tests
// replace it to control when the read returns, see what is saved and
// deliver changes.
type file interface {
	Save(fileData) error
	Remove() error
	Load() (fileData, error)
	Flush(ctx context.Context) error
	Path() string
	Watch(fn func(fileData, error)) (stop func(), err error)
}

// Store holds the scroll places of up to Max chats. Its methods are safe for
// concurrent use from any goroutine. Set, Forget, Get, Len and Loaded never
// wait on the disk, so the GUI's main goroutine may call them; Load,
// GetContext, Flush and Close wait, under a context.
type Store struct {
	file  file
	sched *settle.Scheduler
	max   int

	onChange func(chats []string) // Options.OnChange; nil: none

	loadDone chan struct{} // closed once the file was read and merged
	saveMu   sync.Mutex    // held by save from copy to queue, so saves queue in state order

	// watchMu orders the watch's start, by read, with its end, by Close,
	// so that a watch never starts after Close. Order: watchMu, then mu.
	watchMu   sync.Mutex
	closed    bool   // Close has run; guarded by watchMu
	stopWatch func() // ends the running watch, if any; guarded by watchMu

	mu      sync.Mutex               // protects the fields below
	lru     list.List                // of *record, least recently set first
	byChat  map[string]*list.Element // the lru element of each chat
	forgot  map[string]bool          // chats forgotten before the read; nil after it
	loaded  bool                     // the read has been merged
	waiting bool                     // a save found the file unread; set until the read has queued it
	readErr error                    // what the read met; saves are off unless it is nil or ErrCorrupt
	lost    error                    // why the last save could not be queued (statefile.ErrClosed)
	// gone holds the tombstones (see the package documentation) when the
	// Store watches, and is nil when it does not.
	gone     map[string]time.Time
	watchErr error // why the watch could not start
	// saved holds each chat's place as the last save handed it to
	// statefile, for Set to tell a scroll back to it (see Set). A chat
	// that a merge or a Forget changed since is not in it.
	saved map[string]Anchor
}

// Open returns the Store for the anchors file at path in st. It does not
// touch the disk and does not wait: it queues the file's read (see the
// package documentation), and with [Options.Watch] the watch starts after
// that read. The only errors are statefile.Open's, such as
// statefile.ErrClosed; the Store is then nil.
func Open(st *statefile.Store, path string, opts Options) (*Store, error) {
	f, err := statefile.OpenWith(st, path, statefile.FileOptions[fileData]{Migrations: formatHistory})
	if err != nil {
		return nil, fmt.Errorf("anchors: %w", err)
	}
	return open(f, opts), nil
}

// formatHistory is the file format's versions (see "The file" in the
// package documentation). It has no step to run yet; declaring version 1
// makes statefile refuse a file a newer release wrote (a higher "version",
// statefile.ErrNewerVersion), which the Store then never saves over, so
// going back to an older release never destroys a newer file.
var formatHistory = []statefile.Migration{{Version: 1, Migrate: func(b []byte) ([]byte, error) { return b, nil }}}

// OpenContext is [Open] followed by [Store.Load], for callers that can wait
// (a start-up goroutine, a command-line tool): it returns once the file has
// been read or ctx has ended. The Store is nil only when Open fails;
// otherwise it is usable and err is Load's (nil, a corrupt file kept
// aside, a file that could not be read, or ctx's error while the read goes
// on in the background): log it and go on.
func OpenContext(ctx context.Context, st *statefile.Store, path string, opts Options) (*Store, error) {
	s, err := Open(st, path, opts)
	if err != nil {
		return nil, err
	}
	return s, s.Load(ctx)
}

func open(f file, opts Options) *Store {
	s := &Store{
		file:     f,
		max:      opts.max(),
		loadDone: make(chan struct{}),
		byChat:   map[string]*list.Element{},
		forgot:   map[string]bool{},
		onChange: opts.OnChange,
	}
	if opts.watch() {
		s.gone = map[string]time.Time{}
	}
	s.sched = settle.New(opts.settle(), s.save)
	go s.read() // the Store's: it ends when statefile answers the read
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
// returns false for the others. [Store.GetContext] waits for the
// read. Get does not make chat recently set.
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
