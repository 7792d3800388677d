package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
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
	lost  map[string]struct{}     // watched directories whose watch the kernel dropped
}

// rearmEvery is how often the watch loop tries to watch again a directory
// that was removed or renamed (the kernel drops a watch with its inode:
// IN_DELETE_SELF, IN_MOVE_SELF, inotify(7)), until one is back at the name.
// Only while such a directory has live watches; a Save through the Store
// makes it again, as may the app or a sync tool.
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
}

func startDirWatcher(s *Store, n notifier) *dirWatcher {
	dw := &dirWatcher{
		s: s, n: n, done: make(chan struct{}),
		paths: make(map[string]*watchedPath),
		dirs:  make(map[string]int),
		regs:  make(map[*watchReg]struct{}),
		lost:  make(map[string]struct{}),
	}
	go dw.loop()
	return dw
}

// addWatch registers sub for q's path, starting the Store's notifier with
// its first watch and adding the path's directory with the directory's
// first watch.
func (s *Store) addWatch(q *queue, sub subscriber) (*watchReg, error) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if s.watcher == nil {
		n, err := s.newNotifier()
		if err != nil {
			return nil, fmt.Errorf("statefile: watch %s: %w", q.path, err)
		}
		s.watcher = startDirWatcher(s, n)
	}
	reg := &watchReg{dw: s.watcher, q: q, sub: sub, dir: filepath.Dir(q.path)}
	q.addSub(sub)
	if reg.dw.register(reg) {
		if err := s.addDir(reg.dw.n, reg.dir); err != nil {
			if ended := s.dropLocked(reg); ended != nil {
				<-ended // the loop takes no lock that watchMu guards
			}
			return nil, fmt.Errorf("statefile: watch %s: %w", q.path, err)
		}
	}
	return reg, nil
}

// addDir watches dir, creating it first (0o700, as a save would) when it
// is missing, so a watch can start before the first save.
func (s *Store) addDir(n notifier, dir string) error {
	err := n.Add(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = s.mkdirAll(dir); err != nil {
			return err
		}
		err = n.Add(dir)
	}
	return err
}

// stop ends the watch: after it returns, fn is not running and is never
// called again. A second call does nothing.
func (r *watchReg) stop() {
	r.once.Do(func() {
		s := r.q.s
		s.watchMu.Lock()
		ended := s.dropLocked(r)
		s.watchMu.Unlock()
		if ended != nil {
			<-ended
		}
		r.sub.stop()
	})
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

// stopWatches stops every live watch of s (Store.Close).
func (s *Store) stopWatches() {
	s.watchMu.Lock()
	var regs []*watchReg
	if dw := s.watcher; dw != nil {
		dw.mu.Lock()
		for r := range dw.regs {
			regs = append(regs, r)
		}
		dw.mu.Unlock()
	}
	s.watchMu.Unlock()
	for _, r := range regs {
		r.stop()
	}
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
// paths to a settler and asks the paths' writers for a check when a burst
// settles. When a watched directory goes, it checks the directory's paths
// and watches the directory again once it is back. It ends when the
// notifier's channels close.
func (dw *dirWatcher) loop() {
	defer close(dw.done)
	st := newSettler(settleQuiet, settleMax)
	timer := time.NewTimer(settleMax)
	timer.Stop()
	defer timer.Stop()
	var rearm *time.Timer // runs while a directory is lost
	defer func() {
		if rearm != nil {
			rearm.Stop()
		}
	}()
	var rearmC <-chan time.Time
	events, errs := dw.n.Events(), dw.n.Errors()
	for events != nil || errs != nil {
		select {
		case ev, ok := <-events:
			switch {
			case !ok:
				events = nil
			case dw.watched(ev.Name):
				st.poke(ev.Name, time.Now())
			case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
				dw.dirGone(st, ev.Name)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
			} else {
				dw.missed(st, err)
			}
		case <-timer.C:
			dw.check(st.due(time.Now()))
		case <-rearmC:
			rearm, rearmC = nil, nil
			dw.rearm(st)
		}
		if at, ok := st.next(); ok {
			timer.Reset(time.Until(at))
		} else {
			timer.Stop()
		}
		if rearm == nil && dw.anyLost() {
			rearm = time.NewTimer(rearmEvery)
			rearmC = rearm.C
		}
	}
}

// dirGone handles the removal or rename of what may be a watched
// directory: the kernel has dropped its watch, and the files in it are gone
// from their paths (a rename of the directory reports nothing for them), so
// each watched path in it gets a check. It then tries to watch the
// directory again at once, for a directory swapped for another.
func (dw *dirWatcher) dirGone(st *settler, dir string) {
	dw.mu.Lock()
	if dw.dirs[dir] == 0 {
		dw.mu.Unlock()
		return
	}
	dw.lost[dir] = struct{}{}
	dw.pokeDirLocked(st, dir)
	dw.mu.Unlock()
	dw.rearm(st)
}

// rearm tries to watch each lost directory again. A directory back at its
// name gets its paths checked, for files made in it before the watch was.
func (dw *dirWatcher) rearm(st *settler) {
	dw.mu.Lock()
	dirs := make([]string, 0, len(dw.lost))
	for d := range dw.lost {
		dirs = append(dirs, d)
	}
	dw.mu.Unlock()
	for _, d := range dirs {
		err := dw.n.Add(d)
		dw.mu.Lock()
		switch {
		case err == nil && dw.dirs[d] == 0:
			// Its last watch stopped meanwhile, and that stop's Remove
			// came before this Add.
			dw.mu.Unlock()
			dw.n.Remove(d) //nolint:errcheck
			continue
		case err == nil:
			delete(dw.lost, d)
			dw.pokeDirLocked(st, d)
		case !errors.Is(err, fs.ErrNotExist):
			if l := dw.s.opts.Logger; l != nil {
				l.Warn("statefile: watch the directory again", slog.String("dir", d), slog.Any("err", err))
			}
		}
		dw.mu.Unlock()
	}
}

func (dw *dirWatcher) anyLost() bool {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return len(dw.lost) > 0
}

// pokeDirLocked marks every watched path in dir for a check; dw.mu is held.
func (dw *dirWatcher) pokeDirLocked(st *settler, dir string) {
	now := time.Now()
	for p := range dw.paths {
		if filepath.Dir(p) == dir {
			st.poke(p, now)
		}
	}
}

func (dw *dirWatcher) watched(path string) bool {
	dw.mu.Lock()
	defer dw.mu.Unlock()
	return dw.paths[path] != nil
}

// missed handles a notifier error. Events may have been lost (inotify's
// queue overflowed: IN_Q_OVERFLOW, fsnotify.ErrEventOverflow), so every
// watched path gets a check; a check that finds nothing new reports nothing.
func (dw *dirWatcher) missed(st *settler, err error) {
	if l := dw.s.opts.Logger; l != nil {
		l.Warn("statefile: watch error; checking every watched file", slog.Any("err", err))
	}
	now := time.Now()
	dw.mu.Lock()
	defer dw.mu.Unlock()
	for p := range dw.paths {
		st.poke(p, now)
	}
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
