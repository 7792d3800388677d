package keyed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/offmain/offmain/internal/mirror"
	"github.com/offmain/offmain/statefile"
)

// read loads the file and, unless that failed for a reason that may pass
// (see retryable), has the store merge it under what was set since Open,
// and, if a save found the file unread meanwhile, or the file held
// something now dropped, queues a save. With Watch it then starts the
// watch, unless saves are off. It runs on a goroutine of the Core's own,
// started by startReadLocked, and closes done when it ends: after the
// Report and AfterRead callbacks, which run once Load returns.
func (c *Core[T]) read(done chan struct{}) {
	defer close(done)
	data, err := c.file.Load(context.Background())
	err = c.readError(err)
	c.mu.Lock()
	c.readErr = err
	news := c.noteReadLocked(err)
	if retryable(err) {
		c.reading = nil
		c.armRetryLocked()
		c.mu.Unlock()
		c.endFirstRead()
		c.report(news)
		return
	}
	c.retry.Succeeded()
	dropped := c.cfg.Read(data, time.Now())
	c.loaded = true
	resave := (c.waiting || dropped) && SavesOn(err)
	watch := c.cfg.Watch && SavesOn(err)
	c.mu.Unlock()
	if resave {
		// waiting stays set until this save is queued: a Flush that finds it
		// set waits for loadDone, which closes after the save, so no Flush
		// can slip in between the merge and the save and return early.
		c.save()
	}
	c.mu.Lock()
	if SavesOn(err) {
		c.waiting = false
	}
	c.reading = nil
	c.mu.Unlock()
	if watch {
		c.startWatch()
	}
	close(c.loadDone)
	c.endFirstRead()
	// The app's callbacks run once Load's waiters are released, so that
	// one that calls Load (or Flush, which waits for the read) returns.
	c.report(news)
	if c.cfg.AfterRead != nil {
		c.cfg.AfterRead()
	}
}

// endFirstRead closes tried if no read has yet.
func (c *Core[T]) endFirstRead() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.triedOnce {
		c.triedOnce = true
		close(c.tried)
	}
}

// readError says what the read's err means for the store: a missing file
// is no error (nothing saved yet); a corrupt one was moved aside and the
// store starts empty; a newer release's file is never read nor saved
// over; after any other, the store keeps its edits in memory and reads
// again (see retryable), so that what could not be read is never
// overwritten.
func (c *Core[T]) readError(err error) error {
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, statefile.ErrCorrupt):
		return fmt.Errorf("%s: starting empty: %w", c.cfg.Name, err)
	case errors.Is(err, statefile.ErrNewerVersion):
		return fmt.Errorf("%s: not saving over a newer release's file: %w", c.cfg.Name, err)
	default:
		return fmt.Errorf("%s: not saving until the file can be read (reading it again): %w", c.cfg.Name, err)
	}
}

// SavesOn reports whether a store saves after a read that met readErr: a
// missing file or a corrupt one (moved aside) is replaced; a file that
// could not be read, or that a newer release wrote, is not.
func SavesOn(readErr error) bool {
	return readErr == nil || errors.Is(readErr, statefile.ErrCorrupt)
}

// retryable reports whether a read that met readErr (from readError) is
// tried again: any error but a corrupt file or a newer release's, which
// reading again would not change. EACCES, EIO, EISDIR, a network home not
// mounted yet: each may pass.
func retryable(readErr error) bool {
	return readErr != nil && !errors.Is(readErr, statefile.ErrCorrupt) && !errors.Is(readErr, statefile.ErrNewerVersion)
}

// save is the scheduler's callback (Close's last one included), and also
// runs from read; saveMu keeps the two from overlapping. It hands statefile
// the store's snapshot, or removes the file when the store has nothing to
// write. Before the file has been read it only notes that read must save,
// since a save then would drop the file's content, and has a read that
// failed tried again now; when saves are off (a newer release's file) it
// only notes that an edit is not saved.
func (c *Core[T]) save() {
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	c.mu.Lock()
	if !c.loaded {
		c.waiting = true
		c.startReadLocked()
		c.mu.Unlock()
		return
	}
	if !SavesOn(c.readErr) {
		c.waiting = true
		c.mu.Unlock()
		return
	}
	data, write := c.cfg.Snapshot(time.Now())
	c.mu.Unlock()
	var err error
	if write {
		err = c.file.Save(data)
	} else {
		err = c.file.Remove()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost = err
}

// startWatch starts the watch once the file has been read, unless Close
// came first. A save by another process between the read and this is seen
// with the next change of the file (by either side: a save missing a key
// gets it written back). Order: watchMu, then mu.
func (c *Core[T]) startWatch() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.closed {
		return
	}
	stop, err := c.file.Watch(c.changed)
	if err != nil {
		err = fmt.Errorf("%s: not watching: %w", c.cfg.Name, err)
		c.mu.Lock()
		c.watchErr = err
		c.mu.Unlock()
		c.report(err)
		return
	}
	c.stopWatch = stop
}

// endWatch stops the watch, if one runs, waiting for a call of changed in
// progress, and keeps one from starting later.
func (c *Core[T]) endWatch() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.closed = true
	if c.stopWatch != nil {
		c.stopWatch()
		c.stopWatch = nil
	}
}

// changed is the watch's fn: another process changed the file. It runs on
// statefile's goroutine, one call at a time, and never after the watch stops.
func (c *Core[T]) changed(data T, err error) {
	mirror.Report(data, err, c.sched.Mark,
		func(d T) ([]string, bool) { return c.cfg.Merge(d, time.Now()) }, c.cfg.OnChange)
}

// noteReadLocked returns err if the app has not heard of it yet: the first
// of a run of failures, or one that fails differently; nil otherwise.
// Caller holds mu.
func (c *Core[T]) noteReadLocked(err error) error {
	if err == nil {
		c.reported = ""
		return nil
	}
	if text := err.Error(); text != c.reported {
		c.reported = text
		return err
	}
	return nil
}

// report hands err, if any, to Config.Report.
func (c *Core[T]) report(err error) {
	if err != nil && c.cfg.Report != nil {
		c.cfg.Report(err)
	}
}
