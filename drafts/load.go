package drafts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/offmain/offmain/internal/settle"
	"github.com/offmain/offmain/statefile"
)

// Open returns the Store for the drafts file at path in st. It does not
// touch the disk and does not wait: it queues the file's read on the path's
// writer in statefile, behind any saves already queued there, and returns.
// Until that read lands ([Store.Loaded] closes), Get and Tabs know only the
// drafts set since Open, which win over the file's; [Store.Load] waits for
// the read and returns what it met (a corrupt file kept aside, a file that
// could not be read and so is never overwritten). With [Options.Watch] the
// watch starts after the read. The only errors are statefile.Open's, such
// as statefile.ErrClosed; the Store is then nil.
func Open(st *statefile.Store, path string, opts Options) (*Store, error) {
	f, err := statefile.OpenWith(st, path, statefile.FileOptions[fileData]{Migrations: formatHistory})
	if err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
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
		opts:     opts,
		onChange: opts.OnChange,
		drafts:   map[string]Draft{},
		touched:  map[string]bool{},
		loadDone: make(chan struct{}),
	}
	if opts.watch() {
		s.gone = map[string]time.Time{}
	}
	s.sched = settle.New(opts.settle(), s.save)
	go s.read() // the Store's: it ends when statefile answers the read
	return s
}

// read loads the file, merges it under the drafts set since Open, and, if
// a save found the file unread meanwhile, or the file held drafts now
// dropped, queues a save. A watching Store then starts its watch, unless
// saves are off. It runs on the Store's own goroutine, started by open; it
// ends when statefile answers the read (on a disk that never answers, when
// the disk does, or at exit).
func (s *Store) read() {
	data, err := s.file.LoadContext(context.Background())
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist): // no drafts yet
		err = nil
	case errors.Is(err, statefile.ErrCorrupt):
		err = fmt.Errorf("drafts: starting empty: %w", err)
	default:
		// Never overwrite what could not be read: saves stay off.
		err = fmt.Errorf("drafts: not saving, the file could not be read: %w", err)
	}
	s.mu.Lock()
	s.readErr = err
	dropped := s.mergeReadLocked(data, time.Now())
	s.loaded = true
	s.touched = nil
	resave := s.waiting || dropped
	watch := s.gone != nil && savesOn(err)
	s.mu.Unlock()
	if resave {
		// waiting stays set until this save is queued: a Flush that finds it
		// set waits for loadDone, which closes after the save, so no Flush
		// can slip in between the merge and the save and return early.
		s.save()
	}
	s.mu.Lock()
	s.waiting = false
	s.mu.Unlock()
	if watch {
		s.startWatch()
	}
	close(s.loadDone)
}

// mergeReadLocked puts the file's drafts under the ones set since Open:
// a tab set, put or deleted since is the newer and keeps its state. Drafts
// older than MaxAge, empty ones and (watching) those a tombstone deletes
// are dropped; it reports whether the file held anything now dropped, so
// that it is rewritten. Caller holds mu.
func (s *Store) mergeReadLocked(data fileData, now time.Time) (dropped bool) {
	cutoff, expire := s.opts.cutoff(now)
	for tab, d := range data.Drafts {
		if s.touched[tab] {
			continue
		}
		if d.empty() || (expire && d.UpdatedAt.Before(cutoff)) {
			dropped = true
			continue
		}
		s.drafts[tab] = d
	}
	if s.gone == nil {
		return dropped
	}
	deleted := make(map[string]time.Time, len(data.Deleted))
	for tab, at := range data.Deleted {
		if !s.touched[tab] {
			deleted[tab] = at
		}
	}
	return s.loadTombstones(deleted, now) || dropped
}

// Load waits until the file has been read or ctx ends, and returns what
// the read met: nil when the file was read or did not exist; an error
// matching statefile.ErrCorrupt when it did not parse (statefile kept the
// bytes aside when it could, see statefile.CorruptError; the Store started
// empty and saves as usual); any other read error (EACCES, EIO), after
// which the Store keeps working in memory but never saves, so that a file
// it could not read is not overwritten: fix the cause (permissions, the
// disk) and start again. With [Options.Watch], it also returns an error
// saying so if the watch could not start (the Store then works without
// it). Every call returns the same error, or one wrapping ctx's if ctx
// ended first.
//
// Load is optional, and blocks: call it off the GUI's main goroutine, to
// log what the read met and to know the drafts are all there, or wait on
// [Store.Loaded] instead.
func (s *Store) Load(ctx context.Context) error {
	select {
	case <-s.loadDone:
	case <-ctx.Done():
		return fmt.Errorf("drafts: %s not read yet: %w", s.file.Path(), ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return joinErrs(s.readErr, s.watchErr)
}

// Loaded returns a channel that is closed once the file's read has landed
// and its drafts are merged: from then on Get and Tabs answer for every
// draft. A GUI can wait on it off its main goroutine and then redraw, to
// show a draft that Get did not know yet.
func (s *Store) Loaded() <-chan struct{} { return s.loadDone }

// GetContext is [Store.Get] for callers that can wait: it first waits for
// the file's read, until ctx ends. It returns an error wrapping ctx's only
// when ctx ended first, and then answers like Get; what the read met is
// [Store.Load]'s to report.
func (s *Store) GetContext(ctx context.Context, tab string) (Draft, bool, error) {
	var err error
	select {
	case <-s.loadDone:
	case <-ctx.Done():
		err = fmt.Errorf("drafts: %s not read yet: %w", s.file.Path(), ctx.Err())
	}
	d, ok := s.Get(tab)
	return d, ok, err
}

// savesOn reports whether the Store saves after a read that met err: a
// missing file or a corrupt one (moved aside) is replaced; a file that
// could not be read is not.
func savesOn(readErr error) bool {
	return readErr == nil || errors.Is(readErr, statefile.ErrCorrupt)
}

// joinedError is errors.Join's result with its text on one line (errors.Join
// puts a newline between the parts), so that one-line logs stay whole.
type joinedError []error

func (e joinedError) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return strings.Join(parts, "; ")
}

func (e joinedError) Unwrap() []error { return e }

// joinErrs is errors.Join with a one-line text: nil when every err is nil,
// the error itself when only one is not and its text is one line.
func joinErrs(errs ...error) error {
	var e joinedError
	for _, err := range errs {
		if err != nil {
			e = append(e, err)
		}
	}
	switch {
	case len(e) == 0:
		return nil
	case len(e) == 1 && !strings.Contains(e[0].Error(), "\n"):
		return e[0]
	}
	return e
}
