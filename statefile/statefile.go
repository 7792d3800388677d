package statefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Store owns the writers of a set of state files. It is safe for concurrent
// use. The zero Store is not usable: create one with [NewStore].
type Store struct {
	opts    Options
	log     *slog.Logger  // Options.Logger, or slog.Default()
	tracer  *csvTracer    // nil unless OFFMAIN_TRACE is set
	tracing atomic.Bool   // Trace or tracer set: Save stamps queue times
	closed  atomic.Bool   // written under mu; read under a queue's mu where a Save must not slip past it
	sem     chan struct{} // one token per step that runs: Options.MaxParallel (writer.go)
	hooks   hooks         // the disk and the clock's seams; tests replace them

	watchMu sync.Mutex  // serializes Watch and stop; protects watcher
	watcher *dirWatcher // nil while nothing is watched
	lockMu  sync.Mutex  // Exclusive: serializes Opens, which may take a lock

	mu      sync.Mutex             // protects the fields below
	files   map[string]*queue      // by absolute, clean path
	writers map[*writer]struct{}   // the running writer goroutines (writer.go)
	dirs    map[string]*dirListing // the sweep's one read of each directory (sweep.go)
}

// hooks are the steps a Store takes on the disk, and the points between
// them, as functions: NewStore sets the real ones, and the package's tests
// replace them (testing/synctest cannot wait on a real system call).
type hooks struct {
	commit      commitFunc                          // the disk step of a save or remove
	readFile    func(string) ([]byte, error)        // a state file's read
	stat        func(string) (fs.FileInfo, error)   // os.Stat, of a watched directory
	syncDir     func(dir string) error              // fsyncs a directory after a rename or remove
	readDir     func(string) ([]os.DirEntry, error) // os.ReadDir, the sweep's listing
	newNotifier func() (notifier, error)            // fsnotify

	tempCreated  func(name string) // if set, called between a temp file's creation and its claim
	beforeRename func(name string) // if set, called with the temp file written, just before it is renamed over the path
	closeFlushed func()            // if set, called by Close between its flush and its end of retries
	lockReleased func()            // if set, called once a closed Store decided to release a path's lock
}

// NewStore returns a Store with the given options. It starts no goroutine.
func NewStore(opts Options) *Store {
	log := opts.Logger
	if log == nil {
		log = slog.Default() // see Options.Logger: failures are never silent by default
	}
	s := &Store{
		opts:    opts,
		log:     log,
		sem:     make(chan struct{}, opts.maxParallel()),
		files:   make(map[string]*queue),
		writers: make(map[*writer]struct{}),
		dirs:    make(map[string]*dirListing),
	}
	s.hooks = hooks{
		readFile:    readStateFile,
		stat:        os.Stat,
		syncDir:     syncDir,
		readDir:     os.ReadDir,
		newNotifier: newFSNotifier,
	}
	s.hooks.commit = s.commitToDisk
	if name := os.Getenv(traceEnv); name != "" {
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
		s.start(q) // the sweep
	}
	return &File[T]{q: q, slot: sl}, nil
}

// Flush waits until every save and remove queued on any path before the
// call has reached the disk (or failed), as [File.Flush] does for one
// path, and returns nil when each path's newest state is on disk: a
// *[NotDrainedError] names the others. Called from a callback on a
// writer ([Options.OnError], [Options.Trace], a MarshalJSON), it does not
// wait for what that writer cannot finish first, and reports such a path
// pending.
func (s *Store) Flush(ctx context.Context) error {
	nd := &NotDrainedError{}
	s.flushAll(ctx, nd)
	return nd.orNil()
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
	s.flushAll(ctx, nd)
	if s.hooks.closeFlushed != nil {
		s.hooks.closeFlushed()
	}
	s.endRetries(ctx, nd)
	return nd.orNil()
}

// Report hands err to [Options.OnError] and [Options.Logger], the route
// the Store's own failures take, so that everything an app must show the
// person arrives in one place: drafts and anchors report there what their
// reads met, and an app may route other failures the same way (a
// qos.Group's: Group{OnError: store.Report}). It does not block beyond
// what OnError does, and is safe for concurrent use.
func (s *Store) Report(err error) { s.report("", err) }

// report is Report of a failure of path ("" when the error is not one
// path's, as for what Report is given).
func (s *Store) report(path string, err error) {
	if err == nil {
		return
	}
	if s.opts.OnError != nil {
		s.opts.OnError(err)
	}
	if path == "" {
		s.log.Error("statefile: failure reported", slog.Any("err", err))
		return
	}
	s.log.Error("statefile: save failed", slog.String("path", path), slog.Any("err", err))
}

func (nd *NotDrainedError) orNil() error {
	if len(nd.Pending) == 0 && len(nd.Failed) == 0 {
		return nil
	}
	return nd
}
