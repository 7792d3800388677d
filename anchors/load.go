package anchors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"time"

	"github.com/offmain/offmain/statefile"
)

// read loads the file, merges it under the places set since Open, and, if a
// save found the file unread meanwhile, queues that save. A watching Store
// then starts its watch, unless saves are off. It runs on the Store's own
// goroutine, started by open; it ends when statefile's Load returns (on a
// disk that never answers, when the disk does, or at exit).
func (s *Store) read() {
	data, err := s.file.Load()
	s.mu.Lock()
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case errors.Is(err, statefile.ErrCorrupt):
		err = fmt.Errorf("anchors: starting empty: %w", err)
	default:
		// Never overwrite what could not be read: saves stay off.
		err = fmt.Errorf("anchors: not saving, the file could not be read: %w", err)
	}
	s.readErr = err
	trimmed := s.mergeLocked(data.Anchors)
	if s.gone != nil && s.forgetLocked(data.Forgotten, time.Now()) {
		trimmed = true
	}
	s.loaded = true
	s.forgot = nil
	resave := s.waiting || trimmed
	watch := s.gone != nil && (err == nil || errors.Is(err, statefile.ErrCorrupt))
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

// mergeLocked puts the file's places, oldest first, before the places set
// since Open, skipping chats set or forgotten since, then evicts beyond max.
// It reports whether the file held places that are now dropped.
func (s *Store) mergeLocked(recs []record) (dropped bool) {
	front := s.lru.Front()
	for _, r := range recs {
		if _, ok := s.byChat[r.Chat]; ok || s.forgot[r.Chat] {
			continue
		}
		if front == nil {
			s.byChat[r.Chat] = s.lru.PushBack(&r)
		} else {
			s.byChat[r.Chat] = s.lru.InsertBefore(&r, front)
		}
	}
	n := s.lru.Len()
	s.evictLocked()
	return s.lru.Len() < n
}

// Load waits until the file has been read or ctx ends. It returns what the
// read met: nil when the file was read or did not exist; an error matching
// statefile.ErrCorrupt when it did not parse (statefile kept the bytes
// aside when it could, see statefile.CorruptError; the store started empty
// and saves normally); any other read error (EACCES, EIO), after which the
// Store keeps working in memory but never saves, so that a file it could
// not read is not overwritten: fix the cause and start again. With
// [Options.Watch], it also returns an error saying so if the watch could
// not start (the Store then works without it). Every call returns the same
// error, or one wrapping ctx's if ctx ended first.
//
// Load is optional, and blocks: call it off the GUI's main goroutine, to
// log what the read met and to know the places are all there, or wait on
// [Store.Loaded] instead.
func (s *Store) Load(ctx context.Context) error {
	select {
	case <-s.loadDone:
	case <-ctx.Done():
		return fmt.Errorf("anchors: %s not read yet: %w", s.file.Path(), ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return joinErrs(s.readErr, s.watchErr)
}

// GetContext is [Store.Get] for callers that can wait: it first waits for
// the file's read, behind the saves already queued on its path, until ctx
// ends. It returns an error wrapping ctx's only when ctx ended first, and
// then answers like Get; what the read met is [Store.Load]'s to report.
func (s *Store) GetContext(ctx context.Context, chat string) (Anchor, bool, error) {
	var err error
	select {
	case <-s.loadDone:
	case <-ctx.Done():
		err = fmt.Errorf("anchors: %s not read yet: %w", s.file.Path(), ctx.Err())
	}
	a, ok := s.Get(chat)
	return a, ok, err
}

// Loaded returns a channel that is closed once the file's read has landed
// and its places are merged: from then on Get answers for every place. It
// is closed once; Open started the read. A GUI can wait
// on it off its main goroutine and then redraw, for instance to restore a
// scroll place that Get did not know yet.
func (s *Store) Loaded() <-chan struct{} { return s.loadDone }

// save is the scheduler's callback (Close's last one included), and also
// runs from read; saveMu keeps the two from overlapping. It hands statefile
// a copy of the places, least recently set first (and the tombstones), or
// removes the file when there are none. Before the file has been read it
// only notes that read must save, since a save then would drop the file's
// places.
func (s *Store) save() {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if !s.loaded {
		s.waiting = true
		s.mu.Unlock()
		return
	}
	if s.readErr != nil && !errors.Is(s.readErr, statefile.ErrCorrupt) {
		s.mu.Unlock()
		return
	}
	recs := make([]record, 0, s.lru.Len())
	saved := make(map[string]Anchor, s.lru.Len())
	for e := s.lru.Front(); e != nil; e = e.Next() {
		r := *e.Value.(*record)
		recs = append(recs, r)
		saved[r.Chat] = r.Anchor
	}
	s.saved = saved
	s.pruneLocked(time.Now())
	var gone map[string]time.Time
	if len(s.gone) > 0 {
		gone = maps.Clone(s.gone)
	}
	s.mu.Unlock()
	var err error
	if len(recs) == 0 && gone == nil {
		err = s.file.Remove()
	} else {
		err = s.file.Save(fileData{Version: fileVersion, Anchors: recs, Forgotten: gone})
	}
	s.mu.Lock()
	s.lost = err
	s.mu.Unlock()
}

// Flush queues any unsaved Set or Forget now, then waits until the file has
// reached the disk or ctx ends. If the file has not been read yet, it waits
// for the read first (a save needs the file's places). It returns
// statefile's error (a *statefile.NotDrainedError naming the path when ctx
// ended first or the save failed), an error wrapping ctx's when the read
// did not finish in time, and errors saying why saves are off or the last
// one could not be queued (statefile.ErrClosed).
func (s *Store) Flush(ctx context.Context) error {
	s.sched.Flush()
	s.mu.Lock()
	waiting := s.waiting
	s.mu.Unlock()
	if waiting {
		select {
		case <-s.loadDone:
		case <-ctx.Done():
			return fmt.Errorf("anchors: %s not read yet, nothing saved: %w", s.file.Path(), ctx.Err())
		}
	}
	err := s.file.Flush(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.lost != nil {
		errs = append(errs, fmt.Errorf("anchors: last place not saved: %w", s.lost))
	}
	if s.readErr != nil && !errors.Is(s.readErr, statefile.ErrCorrupt) {
		errs = append(errs, s.readErr)
	}
	return joinErrs(append(errs, err)...)
}

// Close stops the watch, if any (waiting for a call of [Options.OnChange]
// in progress, so OnChange must not call Close), stops the settle timer,
// queues any unsaved Set or Forget, and waits like [Store.Flush]. If the
// file is still being read when ctx ends, the save is queued when the read
// finishes, and no watch starts. After Close, Get still answers and Set and
// Forget change memory only. Close does not close the statefile.Store. A
// second Close only waits for the file again. A Flush called while Close
// queues the last Set returns only after it is queued.
func (s *Store) Close(ctx context.Context) error {
	s.endWatch()
	s.sched.Close()
	return s.Flush(ctx)
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
