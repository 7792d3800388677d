package statefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
)

// Store owns the writers of a set of state files. It is safe for concurrent
// use. The zero Store is not usable: create one with [NewStore].
type Store struct {
	opts     Options
	log      *slog.Logger // Options.Logger, or slog.Default() when OnError is nil too, else nil
	tracer   *csvTracer   // nil unless OFFMAIN_TRACE is set
	tracing  atomic.Bool  // Trace or tracer set: Save stamps queue times
	closed   atomic.Bool  // written under mu; read under a queue's mu where a Save must not slip past it
	commit   commitFunc   // the disk step; tests replace it to block
	readFile func(string) ([]byte, error)
	stat     func(string) (fs.FileInfo, error) // os.Stat; the watch tests replace it
	syncDir  func(dir string) error            // fsyncs a directory after a rename or remove; tests make it fail

	tempCreated  func(name string)                   // if set, called between a temp file's creation and its claim (tests)
	beforeRename func(name string)                   // if set, called with the temp file written, just before it is renamed over the path (tests)
	readDir      func(string) ([]os.DirEntry, error) // os.ReadDir; tests count the sweep's scans
	closeFlushed func()                              // if set, called by Close between its flush and its end of retries (tests)
	lockReleased func()                              // if set, called once a closed Store decided to release a path's lock (tests)

	newNotifier func() (notifier, error) // fsnotify; tests replace it
	watchMu     sync.Mutex               // serializes Watch and stop; protects watcher
	watcher     *dirWatcher              // nil while nothing is watched
	lockMu      sync.Mutex               // Exclusive: serializes Opens, which may take a lock

	mu        sync.Mutex             // protects the fields below
	files     map[string]*queue      // by absolute, clean path
	ready     []*queue               // queues with work that no worker holds
	workers   int                    // running worker goroutines: ≤ MaxParallel, plus at most as many more for stuck ones
	stepping  map[*worker]struct{}   // workers inside a step
	parked    int                    // workers in stepping waiting for another path (reentry.go); they do not count against MaxParallel
	rechecked bool                   // a recheck timer is armed (see schedule)
	dirs      map[string]*dirListing // the sweep's one read of each directory (sweep.go)
}

// NewStore returns a Store with the given options. It starts no goroutine.
func NewStore(opts Options) *Store {
	log := opts.Logger
	if log == nil && opts.OnError == nil {
		log = slog.Default() // see Options.Logger: failures are never silent by default
	}
	s := &Store{
		opts:     opts,
		log:      log,
		files:    make(map[string]*queue),
		stepping: make(map[*worker]struct{}),
		dirs:     make(map[string]*dirListing),
		readFile: readStateFile,
		readDir:  os.ReadDir,
		stat:     os.Stat,
		syncDir:  syncDir,

		newNotifier: newFSNotifier,
	}
	s.commit = s.commitToDisk
	if name := os.Getenv(TraceEnv); name != "" {
		s.tracer = &csvTracer{name: name}
	}
	s.tracing.Store(opts.Trace != nil || s.tracer != nil)
	return s
}

// Open returns the File for path. Two Opens of the same path (after
// [filepath.Abs] and [filepath.Clean]) in one Store share one queue, so
// their saves keep call order between them; they must use the same type T.
// The first Open of a path queues a sweep of temp files that an earlier
// crash left beside it; the Store reads each directory once for those
// sweeps, at the first of them. Open does no disk I/O on the caller, except the
// first Open of a path in an [Options.Exclusive] Store, which takes the
// path's lock there and returns a [*LockedError] when another Store holds
// it.
func Open[T any](s *Store, path string) (*File[T], error) {
	if path == "" {
		return nil, errors.New("statefile: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("statefile: %s: %w", path, err)
	}
	if s.opts.Exclusive {
		s.lockMu.Lock()
		defer s.lockMu.Unlock()
	}
	lock, err := s.takeLock(abs) // nil unless Exclusive and a first Open
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		lock.release()
		return nil, ErrClosed
	}
	q, existed := s.files[abs]
	if !existed {
		q = newQueue(s, abs, &slot[T]{})
		q.lock = lock
		s.files[abs] = q
	}
	s.mu.Unlock()
	sl, ok := q.slot.(*slot[T])
	if !ok {
		return nil, fmt.Errorf("statefile: %s is already open with type %s", abs, q.slot.typeName())
	}
	if !existed {
		s.schedule(q) // the sweep
	}
	return &File[T]{q: q, slot: sl}, nil
}

// Flush waits until every save and remove queued on any path before the
// call has reached the disk (or failed). A path whose newest save or
// remove failed is tried again at once, unless an attempt of it started
// after the Flush began, and Flush waits for that attempt (see the package
// docs, "Failures and retries"). It returns nil when each path's newest
// state is on disk. A path whose newest state is not on disk after that
// attempt is in the error's Failed, with the attempt's error, however
// many Flushes reported it before; a failure that a later save or remove
// of the path superseded by succeeding is not. An encode error, or an
// Update's function that failed, is not run again: its path stays in
// Failed until a newer save, remove or Update of it succeeds. When ctx
// ends first it returns at once with a [*NotDrainedError] naming the paths
// still pending, and errors.Is(err, ctx.Err()) holds. The writers keep
// going. Called on a writer (from [Options.OnError] or [Options.Trace]),
// it does not wait for what that writer cannot finish first: see
// [ErrReentrant].
func (s *Store) Flush(ctx context.Context) error {
	nd := &NotDrainedError{}
	s.flushAll(ctx, nd, nil)
	return nd.orNil()
}

// FlushExcept is [Store.Flush] that neither waits for nor reports the
// paths in except, given as to [Open] (they are compared after
// [filepath.Abs] and [filepath.Clean]). A quit report that flushes a
// package's files through that package (drafts, anchors) flushes the rest
// of the Store with FlushExcept, so each failure is reported once, under
// the part of the app that owns the file. A path in except that the Store
// has not opened is ignored.
func (s *Store) FlushExcept(ctx context.Context, except ...string) error {
	skip := make(map[string]bool, len(except))
	for _, p := range except {
		if abs, err := filepath.Abs(p); err == nil {
			skip[abs] = true // Abs cleans
		}
	}
	nd := &NotDrainedError{}
	s.flushAll(ctx, nd, skip)
	return nd.orNil()
}

// flushAll is Flush, recording in nd, of every path but those in skip.
func (s *Store) flushAll(ctx context.Context, nd *NotDrainedError, skip map[string]bool) {
	s.mu.Lock()
	qs := make([]*queue, 0, len(s.files))
	for p, q := range s.files {
		if !skip[p] {
			qs = append(qs, q)
		}
	}
	s.mu.Unlock()
	marks := make([]flushMark, len(qs))
	for i, q := range qs {
		marks[i] = q.mark()
	}
	w := s.callerWriter()
	for i, q := range qs {
		s.flushOne(ctx, nd, q, marks[i], w)
	}
	slices.Sort(nd.Pending)
}

// Close flushes like [Store.Flush] and then refuses new work: Save, Remove,
// Open and Watch return [ErrClosed]; Load still reads. Saves queued before
// Close are never dropped, even when Close returns early because ctx ended.
// A second Close returns nil.
//
// Close first stops every watch ([File.Watch]): no fn is called after
// Close returns, and Close waits for a call of fn in progress (which may
// itself wait on the disk, through Load or Flush) only until ctx ends. The
// path of a watch whose fn was still running then is reported in the
// error's Pending, with ctx's error, like a save that did not drain; the
// fn finishes on its own goroutine. Called from a watch's fn, Close waits
// for that fn until ctx ends. With [Options.Exclusive], it releases the
// lock of each path whose saves are done before it returns; a Close that
// gave up on ctx leaves the pending paths locked until their writers
// finish them. After Close no failed save is retried on a timer: the
// failure is in Close's error, and a Flush after Close still tries once
// more, except with Exclusive, where no retry writes a path once its lock
// is released or about to be (another Store may hold it by then). A retry
// that a Flush on another goroutine started while Close ran is waited for
// (until ctx ends) before Close returns, so once Close returned without
// giving up on ctx, nothing of the Store writes the disk unless a Flush
// after Close asks.
//
// A Store dropped without Close is not collected while a failed save
// waits for its retry: the backoff timer holds it, and the retries go on
// (every 30 s at most, see the package docs) for as long as the process
// lives, and its Exclusive locks are held until the process exits. Close a
// Store the app is done with.
func (s *Store) Close(ctx context.Context) error {
	s.mu.Lock()
	already := s.closed.Swap(true)
	s.mu.Unlock()
	if already {
		return nil
	}
	nd := &NotDrainedError{}
	s.stopWatches(ctx, nd)
	s.flushAll(ctx, nd, nil)
	if s.closeFlushed != nil {
		s.closeFlushed()
	}
	s.stopRetries()
	s.endRetries(ctx, nd)
	return nd.orNil()
}

// report sends a failure to OnError and Logger, on the writer goroutine.
func (s *Store) report(path string, err error) {
	if s.opts.OnError != nil {
		s.opts.OnError(path, err)
	}
	if s.log != nil {
		s.log.Error("statefile: save failed", slog.String("path", path), slog.Any("err", err))
	}
}

func (nd *NotDrainedError) orNil() error {
	if len(nd.Pending) == 0 && len(nd.Failed) == 0 {
		return nil
	}
	return nd
}
