package drafts

import (
	"context"
	"fmt"
	"time"

	"github.com/offmain/offmain/internal/keyed"
	"github.com/offmain/offmain/statefile"
)

// Open returns the Store for the drafts file at path in st. It does not
// touch the disk and does not wait: it queues the file's read on the path's
// writer in statefile, behind any saves already queued there, and returns.
// Until that read lands ([Store.Loaded] closes), Get and Tabs know only the
// drafts set since Open, which win over the file's; [Store.Load] waits for
// the read and returns what it met (a corrupt file kept aside, a file that
// could not be read yet and so is not overwritten, see [Store.Load]). With
// [Options.Watch] the watch starts after the read. The only errors are statefile.Open's, such
// as statefile.ErrClosed; the Store is then nil.
func Open(st *statefile.Store, path string, opts Options) (*Store, error) {
	f, err := statefile.OpenWith(st, path, statefile.FileOptions[fileData]{Migrations: formatHistory})
	if err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
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
		opts:    opts,
		drafts:  map[string]Draft{},
		touched: map[string]bool{},
	}
	if opts.watch() {
		s.gone = map[string]time.Time{}
	}
	s.core = keyed.New(f, &s.mu, keyed.Config[fileData]{
		Name: "drafts", Unit: "edit",
		Settle: opts.settle(), Watch: opts.watch(),
		Read: s.mergeReadLocked, Snapshot: s.snapshotLocked,
		Merge: s.merge, OnChange: opts.OnChange,
		Report: report, AfterRead: s.tellExpired,
	})
	s.sched = s.core.Scheduler()
	return s
}

// mergeReadLocked puts the file's drafts under the ones set since Open:
// a tab set, put or deleted since is the newer and keeps its state. Drafts
// older than MaxAge (when set), empty ones and (watching) those a tombstone deletes
// are dropped; it reports whether the file held anything now dropped, so
// that it is rewritten. It ends the tracking of the tabs touched since
// Open. Caller holds mu.
func (s *Store) mergeReadLocked(data fileData, now time.Time) (dropped bool) {
	cutoff, expire := s.opts.cutoff(now)
	for tab, d := range data.Drafts {
		if s.touched[tab] {
			continue
		}
		if d.empty() {
			dropped = true
			continue
		}
		if expire && d.UpdatedAt.Before(cutoff) {
			if s.expired == nil {
				s.expired = map[string]Draft{}
			}
			s.expired[tab] = d
			dropped = true
			continue
		}
		s.drafts[tab] = d
	}
	if s.gone != nil {
		deleted := make(map[string]time.Time, len(data.Deleted))
		for tab, at := range data.Deleted {
			if !s.touched[tab] {
				deleted[tab] = at
			}
		}
		dropped = s.loadTombstones(deleted, now) || dropped
	}
	s.touched = nil
	return dropped
}

// Load waits until the file's first read has ended or ctx ends, and
// returns what the latest read met: nil when the file was read or did not
// exist; an error matching statefile.ErrCorrupt when it did not parse
// (statefile kept the bytes aside when it could, see
// statefile.CorruptError; the Store started empty and saves as usual); one
// matching statefile.ErrNewerVersion for a newer release's file, which the
// Store never saves over; and any other read error (EACCES, EIO, EISDIR, a
// network home not mounted yet). After such an error the Store keeps every
// edit in memory, saves nothing, so that a file it could not read is never
// overwritten, and reads the file again: soon after the failure, then later each time (at most every 30 s), and at
// once when an edit's save comes due and at every Flush and Close. Once a
// read succeeds, the file's drafts are merged under the edits made
// meanwhile, the Store saves, [Store.Loaded] closes, and Load returns nil.
// With [Options.Watch], Load also returns an error saying so if the watch
// could not start (the Store then works without it). If ctx ends first,
// it returns an error wrapping ctx's.
//
// Load is optional, and blocks: call it off the GUI's main goroutine, to
// log what the read met and to know the drafts are all there, or wait on
// [Store.Loaded] instead.
func (s *Store) Load(ctx context.Context) error { return s.core.Load(ctx) }

// Loaded returns a channel that is closed once the file's drafts are
// merged: from then on Get and Tabs answer for every draft. It closes after
// a read that found the file, no file, a corrupt one (moved aside) or a
// newer release's (whose drafts are never read). While a read that failed
// otherwise is retried (see [Store.Load]) it stays open, and it closes when
// a retry reads the file: a GUI can wait on it off its main goroutine and
// then redraw, to show a draft Get did not know yet, and clear a warning
// it showed for Load's error.
func (s *Store) Loaded() <-chan struct{} { return s.core.Loaded() }

// tellExpired hands OnExpire the drafts the read dropped for their age.
// It runs after the read, without the Store's lock.
func (s *Store) tellExpired() {
	s.mu.Lock()
	expired := s.expired
	s.expired = nil
	s.mu.Unlock()
	if len(expired) > 0 && s.opts.OnExpire != nil {
		s.opts.OnExpire(expired)
	}
}
