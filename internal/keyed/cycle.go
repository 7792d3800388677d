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

// read loads the file, has the store merge it under what was set since
// Open, and, if a save found the file unread meanwhile, or the file held
// something now dropped, queues a save. With Watch it then starts the
// watch, unless saves are off. It runs on the Core's own goroutine, started
// by New.
func (c *Core[T]) read() {
	data, err := c.file.LoadContext(context.Background())
	err = c.readError(err)
	c.mu.Lock()
	c.readErr = err
	dropped := c.cfg.Read(data, time.Now())
	c.loaded = true
	resave := c.waiting || dropped
	watch := c.cfg.Watch && SavesOn(err)
	c.mu.Unlock()
	if resave {
		// waiting stays set until this save is queued: a Flush that finds it
		// set waits for loadDone, which closes after the save, so no Flush
		// can slip in between the merge and the save and return early.
		c.save()
	}
	c.mu.Lock()
	c.waiting = false
	c.mu.Unlock()
	if watch {
		c.startWatch()
	}
	close(c.loadDone)
}

// readError says what the read's err means for the store: a missing file
// is no error (nothing saved yet); a corrupt one was moved aside and the
// store starts empty; after any other, saves stay off, so that what could
// not be read is never overwritten.
func (c *Core[T]) readError(err error) error {
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, statefile.ErrCorrupt):
		return fmt.Errorf("%s: starting empty: %w", c.cfg.Name, err)
	default:
		return fmt.Errorf("%s: not saving, the file could not be read: %w", c.cfg.Name, err)
	}
}

// SavesOn reports whether a store saves after a read that met readErr: a
// missing file or a corrupt one (moved aside) is replaced; a file that
// could not be read is not.
func SavesOn(readErr error) bool {
	return readErr == nil || errors.Is(readErr, statefile.ErrCorrupt)
}

// save is the scheduler's callback (Close's last one included), and also
// runs from read; saveMu keeps the two from overlapping. It hands statefile
// the store's snapshot, or removes the file when the store has nothing to
// write. Before the file has been read it only notes that read must save,
// since a save then would drop the file's content; after a read that
// failed (not a missing or corrupt file) it saves nothing.
func (c *Core[T]) save() {
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	c.mu.Lock()
	if !c.loaded {
		c.waiting = true
		c.mu.Unlock()
		return
	}
	if !SavesOn(c.readErr) {
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
		c.mu.Lock()
		c.watchErr = fmt.Errorf("%s: not watching: %w", c.cfg.Name, err)
		c.mu.Unlock()
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
