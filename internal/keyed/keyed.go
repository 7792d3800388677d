// Package keyed holds the machinery that drafts and anchors share as keyed
// stores over one statefile file: values by key in memory, saved once edits
// settle, the file read in the background after Open, and, when asked,
// other processes' saves merged in.
//
// A [Core] runs the parts that do not depend on what is stored: the read
// after Open and what it met, the read again after it failed (see
// [RetryFirst]), the save (held until the read has landed, and never over
// a file that could not be read), Flush, Close, Load and the watch's start
// and end. The store keeps its own state and hands the Core
// the steps that touch it ([Config]): how the read merges the file, what a
// save writes, how another process's save merges. Both sides share the
// store's mutex, so that the read merges the file and marks it read in one
// critical section, and a save sees the file read and takes its snapshot in
// another.
package keyed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/offmain/offmain/internal/backoff"
	"github.com/offmain/offmain/internal/oneline"
	"github.com/offmain/offmain/internal/settle"
)

// File is what a Core needs of a *statefile.File[T]; tests replace it to
// control when the read returns, see when saves are queued and deliver
// changes.
type File[T any] interface {
	Save(T) error
	Remove() error
	Load(ctx context.Context) (T, error)
	Flush(ctx context.Context) error
	Path() string
	Watch(fn func(T, error)) (stop func(), err error)
}

// Config is what a Core needs of its store. Name and Unit make the errors'
// text; the funcs are the store's steps. Read and Snapshot run with
// the store's mutex held; Merge takes it itself; OnChange runs without it.
type Config[T any] struct {
	Name string // the package, the errors' prefix: "drafts"
	Unit string // what one edit is, in "last edit not saved": "edit"

	Settle settle.Options // when a save is queued after edits
	Watch  bool           // follow other processes' saves after the read

	// Read merges the file's content, as the read after Open met it (the
	// zero T for a missing, corrupt or unreadable file), under what was
	// set since Open, and ends whatever tracked those edits. It reports
	// whether the file held anything now dropped, so that it is rewritten.
	Read func(data T, now time.Time) (dropped bool)

	// Snapshot returns what a save writes, and false when the file is to
	// be removed instead. The T must share nothing the store changes
	// later: statefile encodes it on its writer.
	Snapshot func(now time.Time) (data T, write bool)

	// Merge applies what another process saved (with Watch) and returns
	// the keys whose value changed, sorted, and whether the file lacks
	// something memory has. It takes the store's mutex itself.
	Merge func(data T, now time.Time) (changed []string, resave bool)

	// OnChange, if set, is told the keys Merge changed, on statefile's
	// watch goroutine.
	OnChange func(keys []string)
	// Report, if set, gets what a read met (a corrupt file moved aside, a
	// newer release's file, a file that cannot be read yet), once per
	// kind of failure in a row, and why the watch could not start: the
	// statefile.Store's Report, so that the app sees them where it sees
	// the store's own failures.
	Report func(error)
	// AfterRead, if set, runs once the read has merged the file and Load's
	// waiters are released, on the read's goroutine, without the store's
	// mutex: it may call any method of the store.
	AfterRead func()
}

// Core is the store-independent part of a keyed store. Its methods are safe
// for concurrent use. Its zero value is not usable: see [New].
type Core[T any] struct {
	file  File[T]
	cfg   Config[T]
	sched *settle.Scheduler

	loadDone chan struct{} // closed once the file's content is merged (or never can be: see read)
	tried    chan struct{} // closed once the first read has ended, whatever it met
	saveMu   sync.Mutex    // held by save from copy to queue, so saves queue in state order

	// watchMu orders the watch's start, by read, with its end, by Close,
	// so that a watch never starts after Close. Order: watchMu, then mu.
	watchMu   sync.Mutex
	closed    bool   // Close has run; guarded by watchMu
	stopWatch func() // ends the running watch, if any; guarded by watchMu

	mu           *sync.Mutex   // the store's; protects the fields below and the store's state
	loaded       bool          // the read has been merged: saves may be queued (if SavesOn(readErr))
	waiting      bool          // a save came due that could not be queued: the file was not read yet, or saves are off
	readErr      error         // what the latest read met; saves are off unless it is nil or ErrCorrupt
	reading      chan struct{} // closed when the read under way ends; nil while none is
	readsStarted uint64        // reads started so far
	retry        backoff.Timer // the timed read after a failed one
	reported     string        // the text of the read's error Report last got, so a retry failing the same way is not reported again
	stopped      bool          // Close has run: no timed read is armed any more
	triedOnce    bool          // tried is closed
	watchErr     error         // why the watch could not start
	lost         error         // why the last save could not be queued (statefile.ErrClosed)
}

// New returns the Core of a store whose state mu protects, and starts the
// file's read on a goroutine of the Core's own: it ends when statefile
// answers the read (on a disk that never answers, when the disk does, or at
// exit). The store's state must be ready for cfg's funcs before New is
// called.
func New[T any](f File[T], mu *sync.Mutex, cfg Config[T]) *Core[T] {
	c := &Core[T]{file: f, cfg: cfg, mu: mu, loadDone: make(chan struct{}), tried: make(chan struct{})}
	c.retry = backoff.Timer{First: RetryFirst, Max: RetryMax}
	c.sched = settle.New(cfg.Settle, c.save)
	c.mu.Lock()
	c.startReadLocked()
	c.mu.Unlock()
	return c
}

// Scheduler returns the settle scheduler whose callback saves: the store
// marks it on every edit.
func (c *Core[T]) Scheduler() *settle.Scheduler { return c.sched }

// Loaded returns a channel closed once the file's content has been merged:
// the file was read, or found missing, or corrupt (and moved aside), or
// written by a newer release (and so never read nor saved over). While a
// read that failed otherwise is retried, it stays open; it closes when a
// retry reads the file.
func (c *Core[T]) Loaded() <-chan struct{} { return c.loadDone }

// wait waits for the file's first read to end, whatever it met, until ctx
// ends, and then returns an error wrapping ctx's.
func (c *Core[T]) wait(ctx context.Context) error {
	if !doneOrCtx(ctx, c.tried) {
		return fmt.Errorf("%s: %s not read yet: %w", c.cfg.Name, c.file.Path(), ctx.Err())
	}
	return nil
}

// doneOrCtx waits until done is closed or ctx ends, and reports whether
// done was closed, preferring it when both are: select alone picks at
// random, and a read that ended as ctx did has its outcome to tell.
func doneOrCtx(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-ctx.Done():
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

// Load waits for the file's first read, like wait, and returns what the
// latest read met (nil once a retry has read the file), and why the watch
// could not start, on one line.
func (c *Core[T]) Load(ctx context.Context) error {
	if err := c.wait(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return oneline.Join(c.readErr, c.watchErr)
}

// Flush queues any unsaved edit now, then waits until the file has
// reached the disk or ctx ends. An edit made before the file has been read
// needs the read first: Flush then waits for it, and a read that failed is
// tried again at once, so that a quit after the cause went away saves. It
// returns statefile's error, and errors saying why the last save could not
// be queued or why an edit is not saved (the file could not be read, or a
// newer release wrote it), on one line.
func (c *Core[T]) Flush(ctx context.Context) error {
	c.mu.Lock()
	since := c.readsStarted
	c.mu.Unlock()
	c.sched.Flush()
	if err := c.awaitRead(ctx, since); err != nil {
		return err
	}
	err := c.file.Flush(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	if c.lost != nil {
		errs = append(errs, fmt.Errorf("%s: last %s not saved: %w", c.cfg.Name, c.cfg.Unit, c.lost))
	}
	if c.waiting && !SavesOn(c.readErr) {
		errs = append(errs, c.readErr)
	}
	return oneline.Join(append(errs, err)...)
}

// awaitRead waits, when a save is due that the read must queue, for that
// read, starting one if none is under way and none started since the
// Flush began (since: readsStarted then; the save that Flush queued
// starts one, which may have ended already). It returns an error when ctx
// ended first or the read failed: the edits are then in memory only.
func (c *Core[T]) awaitRead(ctx context.Context, since uint64) error {
	c.mu.Lock()
	var ch <-chan struct{}
	switch {
	case !c.waiting || (c.loaded && !SavesOn(c.readErr)):
		c.mu.Unlock()
		return nil
	case c.loaded:
		ch = c.loadDone // the read is queuing its save
	case c.reading == nil && c.readsStarted != since:
		// That read ended: its outcome is this Flush's.
	default:
		ch = c.startReadLocked()
	}
	c.mu.Unlock()
	if ch != nil && !doneOrCtx(ctx, ch) {
		return fmt.Errorf("%s: %s not read yet, nothing saved: %w", c.cfg.Name, c.file.Path(), ctx.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		return oneline.Join(c.readErr)
	}
	return nil
}

// Close stops the watch, if any (waiting for a call of OnChange in
// progress), stops the timed reads and the settle timer, queues any
// unsaved edit, and waits like Flush. A Flush called meanwhile returns only
// after the last edit is queued: the scheduler runs Close's save and that
// Flush's one at a time.
func (c *Core[T]) Close(ctx context.Context) error {
	c.endWatch()
	c.stopRetry()
	c.sched.Close()
	return c.Flush(ctx)
}
