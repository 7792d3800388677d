package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// notifier is the part of an fsnotify.Watcher the watch loop uses. Tests
// replace Store.newNotifier with a fake fed from channels, so the settle
// logic runs under testing/synctest. Close ends the notifier's own
// goroutine, which closes both channels.
type notifier interface {
	Add(dir string) error
	Remove(dir string) error
	Close() error
	Events() <-chan fsnotify.Event
	Errors() <-chan error
}

type fsNotifier struct{ w *fsnotify.Watcher }

func newFSNotifier() (notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsNotifier{w}, nil
}

func (n fsNotifier) Add(dir string) error          { return n.w.Add(dir) }
func (n fsNotifier) Remove(dir string) error       { return n.w.Remove(dir) }
func (n fsNotifier) Close() error                  { return n.w.Close() }
func (n fsNotifier) Events() <-chan fsnotify.Event { return n.w.Events }
func (n fsNotifier) Errors() <-chan error          { return n.w.Errors }

// dirWatcher is a Store's one notifier, shared by all its watches: one
// inotify instance per Store however many files it watches (Linux allows
// 128 instances per user by default: fs.inotify.max_user_instances,
// inotify(7)), and each directory added once. Directories, not files, are
// watched: a save renames a new inode over the name, and a watch on the old
// inode would die with it. Its loop goroutine starts with the Store's first
// watch and ends after its last stops and closes the notifier.
type dirWatcher struct {
	s    *Store
	n    notifier
	done chan struct{} // closed when loop returns

	mu    sync.Mutex              // protects the maps; never held across a notifier call
	paths map[string]*watchedPath // by absolute path
	dirs  map[string]int          // watched directory -> live watches in it
	regs  map[*watchReg]struct{}  // live watches, for Store.Close
	lost  map[string]bool         // watched directories whose watch is gone -> a retry's error was logged
}

// rearmEvery is how often the Store tries to watch again a directory whose
// watch is gone, until a directory is back at the name. inotify drops a
// watch when its directory is deleted (IN_DELETE_SELF, inotify(7)), and
// fsnotify drops it when the directory is moved (its watch would follow the
// inode to the new name: IN_MOVE_SELF). Retries run only while such a
// directory has live watches; a Save through the Store makes it again, as
// may the app or a sync tool.
const rearmEvery = time.Second

type watchedPath struct {
	q *queue
	n int // live watches of the path
}

// watchReg is one live watch: what its stop function undoes.
type watchReg struct {
	dw   *dirWatcher
	q    *queue
	sub  subscriber
	dir  string
	once sync.Once
	// ends are what the stop waits for: the loop's end (the Store's last
	// watch) and fn's return. Set inside once.
	ends []<-chan struct{}
}

func startDirWatcher(s *Store, n notifier) *dirWatcher {
	dw := &dirWatcher{
		s: s, n: n, done: make(chan struct{}),
		paths: make(map[string]*watchedPath),
		dirs:  make(map[string]int),
		regs:  make(map[*watchReg]struct{}),
		lost:  make(map[string]bool),
	}
	go dw.loop()
	return dw
}

// addWatch registers sub for q's path, starting the Store's notifier with
// its first watch and adding the path's directory with the directory's
// first watch.
func (s *Store) addWatch(q *queue, sub subscriber) (_ *watchReg, err error) {
	var ended <-chan struct{}
	defer func() {
		if ended != nil {
			<-ended // after the Unlock below: the loop's end may wait for a rearm, which takes watchMu
		}
	}()
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if s.watcher == nil {
		n, err := s.hooks.newNotifier()
		if err != nil {
			return nil, fmt.Errorf("statefile: watch %s: %w", q.path, err)
		}
		s.watcher = startDirWatcher(s, n)
	}
	reg := &watchReg{dw: s.watcher, q: q, sub: sub, dir: filepath.Dir(q.path)}
	q.addSub(sub)
	// A directory whose watch is gone (see rearmEvery) is made and added
	// again like a new one, as a Watch promises. Its lost mark is taken
	// before the Add, so a loss the loop sees meanwhile marks it again.
	newDir := reg.dw.register(reg)
	wasLost, warned := false, false
	if !newDir {
		wasLost, warned = reg.dw.takeLost(reg.dir)
	}
	if newDir || wasLost {
		if err := s.addDir(reg.dw.n, reg.dir); err != nil {
			if wasLost {
				reg.dw.markLost(reg.dir, warned)
			}
			ended = s.dropLocked(reg)
			return nil, fmt.Errorf("statefile: watch %s: %w", q.path, err)
		}
		if wasLost {
			reg.dw.checkDir(reg.dir) // the other watches there may have missed changes
		}
	}
	return reg, nil
}

// addDir watches dir, creating it first (0o700, as a save would) when it
// is missing, so a watch can start before the first save.
func (s *Store) addDir(n notifier, dir string) error {
	// inotify would watch a file as readily as a directory.
	if fi, err := s.hooks.stat(dir); err == nil && !fi.IsDir() {
		return &fs.PathError{Op: "watch", Path: dir, Err: syscall.ENOTDIR}
	}
	err := n.Add(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = s.mkdirAll(dir); err != nil {
			return err
		}
		err = n.Add(dir)
	}
	return err
}

// dropLocked unregisters reg with s.watchMu held. It removes reg's
// directory from the notifier when reg was the last watch in it, and closes
// the notifier when reg was the Store's last watch; it then returns the
// channel that closes when the loop has ended.
func (s *Store) dropLocked(reg *watchReg) (ended <-chan struct{}) {
	reg.q.removeSub(reg.sub)
	lastInDir, last := reg.dw.unregister(reg)
	switch {
	case last:
		s.watcher = nil
		if err := reg.dw.n.Close(); err != nil {
			// fsnotify did not get to stop its reader (the inotify fd's
			// close failed), so the loop may never see its channels close:
			// do not wait for it.
			return nil
		}
		return reg.dw.done
	case lastInDir:
		// Fails when the directory is gone; the kernel has then dropped
		// the watch itself (IN_IGNORED, inotify(7)).
		reg.dw.n.Remove(reg.dir) //nolint:errcheck
	}
	return nil
}

// register adds reg and reports whether its directory is new to dw.
func (dw *dirWatcher) register(reg *watchReg) (newDir bool) {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	dw.regs[reg] = struct{}{}
	wp := dw.paths[reg.q.path]
	if wp == nil {
		wp = &watchedPath{q: reg.q}
		dw.paths[reg.q.path] = wp
	}
	wp.n++
	dw.dirs[reg.dir]++
	return dw.dirs[reg.dir] == 1
}

// unregister removes reg and reports whether its directory, and dw, have
// no watch left.
func (dw *dirWatcher) unregister(reg *watchReg) (lastInDir, last bool) {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	delete(dw.regs, reg)
	if wp := dw.paths[reg.q.path]; wp != nil {
		if wp.n--; wp.n == 0 {
			delete(dw.paths, reg.q.path)
		}
	}
	if dw.dirs[reg.dir]--; dw.dirs[reg.dir] == 0 {
		delete(dw.dirs, reg.dir)
		delete(dw.lost, reg.dir)
		lastInDir = true
	}
	return lastInDir, len(dw.regs) == 0
}

// loop is the watch goroutine: it feeds the notifier's events for watched
// paths to their bursts and asks the paths' writers for a check when a burst
// settles. When a watched directory goes, or another takes its name, it
// checks the directory's paths and has the directory watched again once one
// is back. It ends when the notifier's channels close.
//
// The loop never calls the notifier itself: fsnotify's reader sends errors
// while holding the lock its Add and Remove take, and only this loop reads
// them. Re-adding runs on a goroutine of its own (rearm), at most one at a
// time, which the loop waits for before it ends.
func (dw *dirWatcher) loop() {
	defer close(dw.done)
	st := newBursts(settleQuiet, settleMax)
	timer := time.NewTimer(settleMax)
	timer.Stop()
	defer timer.Stop()
	var (
		retry     *time.Timer // set while a lost directory waits for its next try
		retryC    <-chan time.Time
		tryNow    bool                     // a directory was just lost: try at once
		rearming  bool                     // a rearm goroutine runs
		rearmDone = make(chan []string, 1) // its result: the directories watched again
	)
	defer func() {
		if retry != nil {
			retry.Stop()
		}
		if rearming {
			<-rearmDone
		}
	}()
	events, errs := dw.n.Events(), dw.n.Errors()
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			switch {
			case !ok:
				events = nil
			case dw.watched(ev.Name):
				st.poke(ev.Name, time.Now())
			case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Create):
				// Remove, Rename: the directory went with its watch. Create
				// (its parent is watched too): another directory took the
				// name, and the watch may still be on the old one.
				tryNow = dw.dirLost(st, ev.Name) || tryNow
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
			} else {
				dw.missed(st, err)
			}
		case <-timer.C:
			dw.check(st.due(time.Now()))
		case <-retryC:
			retry, retryC, tryNow = nil, nil, true
		case back := <-rearmDone:
			rearming = false
			dw.mu.Lock()
			for _, d := range back {
				dw.pokeDirLocked(st, d)
			}
			dw.mu.Unlock()
		}
		if at, ok := st.next(); ok {
			timer.Reset(time.Until(at))
		} else {
			timer.Stop()
		}
		switch {
		case rearming || events == nil:
		case tryNow:
			tryNow, rearming = false, true
			if retry != nil {
				retry.Stop()
				retry, retryC = nil, nil
			}
			go dw.rearm(rearmDone)
		case retry == nil && dw.anyLost():
			retry = time.NewTimer(rearmEvery)
			retryC = retry.C
		}
	}
}

// dirLost handles an event on a name that may be a watched directory: it
// marks the directory lost and its watched paths for a check (a rename of
// the directory reports nothing for the files in it), and reports whether
// it was one.
func (dw *dirWatcher) dirLost(st *bursts, dir string) bool {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	if dw.dirs[dir] == 0 {
		return false
	}
	if _, ok := dw.lost[dir]; !ok { // an existing mark keeps whether its retry error was logged
		dw.lost[dir] = false
	}
	dw.pokeDirLocked(st, dir)
	return true
}

// rearm tries to watch each lost directory again and sends the ones it
// could on done (which has room: one rearm runs at a time). It holds
// s.watchMu, as Watch and stop do around their notifier calls, so no watch
// starts or stops in a directory meanwhile.
func (dw *dirWatcher) rearm(done chan<- []string) {
	var back []string
	defer func() { done <- back }()
	s := dw.s
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.watcher != dw {
		return // the Store's last watch stopped; the notifier is closed
	}
	dw.mu.Lock()
	dirs := make([]string, 0, len(dw.lost))
	for d := range dw.lost {
		dirs = append(dirs, d)
	}
	dw.mu.Unlock()
	for _, d := range dirs {
		if fi, err := s.hooks.stat(d); err != nil || !fi.IsDir() {
			continue // not back yet (or a file took the name)
		}
		// The mark goes before the Add, so a loss the loop sees meanwhile
		// marks the directory again instead of being wiped after it.
		_, warned := dw.takeLost(d)
		err := dw.n.Add(d)
		if err == nil {
			back = append(back, d)
			continue
		}
		logIt := !warned && !errors.Is(err, fs.ErrNotExist) // ENOENT: gone again since the stat
		dw.markLost(d, warned || logIt)
		if l := s.log; l != nil && logIt {
			l.Warn("statefile: cannot watch a directory again; retrying every second",
				slog.String("dir", d), slog.Any("err", err))
		}
	}
}

func (dw *dirWatcher) anyLost() bool {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return len(dw.lost) > 0
}

// takeLost removes dir's lost mark before an Add of dir, and reports
// whether it had one and whether its retry error was logged.
func (dw *dirWatcher) takeLost(dir string) (wasLost, warned bool) {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	warned, wasLost = dw.lost[dir]
	delete(dw.lost, dir)
	return wasLost, warned
}

// markLost puts back the lost mark of dir after a failed Add, unless the
// loop marked it meanwhile or its last watch stopped.
func (dw *dirWatcher) markLost(dir string, warned bool) {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	if dw.dirs[dir] > 0 {
		dw.lost[dir] = dw.lost[dir] || warned
	}
}

// pokeDirLocked marks every watched path in dir for a check; dw.mu is held.
func (dw *dirWatcher) pokeDirLocked(st *bursts, dir string) {
	now := time.Now()
	for _, p := range dw.pathsInLocked(dir) {
		st.poke(p, now)
	}
}

// pathsInLocked returns the watched paths in dir; dw.mu is held.
func (dw *dirWatcher) pathsInLocked(dir string) []string {
	var paths []string
	for p := range dw.paths {
		if filepath.Dir(p) == dir {
			paths = append(paths, p)
		}
	}
	return paths
}

func (dw *dirWatcher) watched(path string) bool {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return dw.paths[path] != nil
}

// missed handles a notifier error. Events may have been lost (inotify's
// queue overflowed: IN_Q_OVERFLOW, fsnotify.ErrEventOverflow), so every
// watched path gets a check; a check that finds nothing new reports nothing.
func (dw *dirWatcher) missed(st *bursts, err error) {
	if l := dw.s.log; l != nil {
		l.Warn("statefile: watch error; checking every watched file", slog.Any("err", err))
	}
	now := time.Now()
	dw.mu.Lock()
	defer dw.mu.Unlock()
	for p := range dw.paths {
		st.poke(p, now)
	}
}

// checkDir queues a check on the writer of each path watched in dir.
func (dw *dirWatcher) checkDir(dir string) {
	dw.mu.Lock()
	paths := dw.pathsInLocked(dir)
	dw.mu.Unlock()
	dw.check(paths)
}

// check queues a check on the writer of each path still watched.
func (dw *dirWatcher) check(paths []string) {
	qs := make([]*queue, 0, len(paths))
	dw.mu.Lock()
	for _, p := range paths {
		if wp := dw.paths[p]; wp != nil {
			qs = append(qs, wp.q)
		}
	}
	dw.mu.Unlock()
	for _, q := range qs {
		q.requestCheck()
	}
}
