package statefile

import (
	"io/fs"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/require"
)

// The watch tests run the whole pipeline (settle loop, check on the
// writer, delivery) on the fake disk of helpers_test.go with a fake
// notifier, under testing/synctest: the fake disk's commits and the tests'
// "external" writes emit the events fsnotify would, and the settle windows
// run on the bubble's fake clock.

// fakeNotifier stands in for fsnotify: events are sent by emit.
type fakeNotifier struct {
	events chan fsnotify.Event
	errs   chan error

	mu      chanMutex      // protects the fields below; held while emit sends, as fsnotify's reader holds its lock
	dirs    map[string]int // Add calls minus Remove calls, by directory
	adds    map[string]int // Add calls, by directory
	closed  bool
	created int // notifiers made by the Store (newNotifier calls)

	addHook func(dir string) // if set, Add calls it first; set before the watch that uses it starts
	addErr  error            // if set, Add fails with it
}

// chanMutex is a mutex made of a channel: a goroutine blocked on it is
// durably blocked for testing/synctest (one blocked on a sync.Mutex is
// not), so a deadlock through the fake notifier's lock fails the test at
// once instead of hanging it.
type chanMutex chan struct{}

func (m chanMutex) Lock()   { m <- struct{}{} }
func (m chanMutex) Unlock() { <-m }

// watchRig is a Store on a fake disk with a fake notifier.
type watchRig struct {
	s *Store
	d *fakeDisk
	n *fakeNotifier

	mu     sync.Mutex      // protects gone and notDir
	gone   map[string]bool // directories the Store's stat does not find
	notDir map[string]bool // names the Store's stat finds a file at
}

func newWatchRig(t *testing.T) *watchRig {
	t.Helper()
	s := NewStore(Options{})
	r := &watchRig{
		s: s, d: newFakeDisk(s, false),
		n:    &fakeNotifier{mu: make(chanMutex, 1), dirs: make(map[string]int), adds: make(map[string]int)},
		gone: make(map[string]bool), notDir: make(map[string]bool),
	}
	s.hooks.stat = r.stat
	s.hooks.newNotifier = func() (notifier, error) {
		r.n.mu.Lock()
		defer r.n.mu.Unlock()
		r.n.events, r.n.errs, r.n.closed = make(chan fsnotify.Event), make(chan error), false
		r.n.created++
		return r.n, nil
	}
	commit := s.hooks.commit
	s.hooks.commit = func(path string, data []byte, tr *SaveTrace) error {
		err := commit(path, data, tr)
		r.n.emit(path, fsnotify.Create) // the rename over path
		return err
	}
	return r
}

func (n *fakeNotifier) Add(dir string) error {
	if n.addHook != nil {
		n.addHook(dir)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.addErr != nil {
		return n.addErr
	}
	n.dirs[dir]++
	n.adds[dir]++
	return nil
}

func (n *fakeNotifier) setAddErr(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.addErr = err
}

func (n *fakeNotifier) addCount(dir string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.adds[dir]
}

// setGone makes dir missing (or present again) for the Store's stat.
func (r *watchRig) setGone(dir string, gone bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone[dir] = gone
}

func (r *watchRig) stat(dir string) (fs.FileInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone[dir] {
		return nil, &fs.PathError{Op: "stat", Path: dir, Err: fs.ErrNotExist}
	}
	return fakeDirInfo{dir: !r.notDir[dir]}, nil
}

// setNotDir puts a file (or, with false, the directory again) at name.
func (r *watchRig) setNotDir(name string, file bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notDir[name] = file
}

// fakeDirInfo is what the rig's stat returns for a name that is there.
type fakeDirInfo struct {
	fs.FileInfo
	dir bool
}

func (i fakeDirInfo) IsDir() bool { return i.dir }

func (n *fakeNotifier) Remove(dir string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dirs[dir]--; n.dirs[dir] == 0 {
		delete(n.dirs, dir)
	}
	return nil
}

func (n *fakeNotifier) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	close(n.events)
	close(n.errs)
	return nil
}

func (n *fakeNotifier) Events() <-chan fsnotify.Event { return n.events }
func (n *fakeNotifier) Errors() <-chan error          { return n.errs }

// emit sends an event to the watch loop, unless no watch runs.
func (n *fakeNotifier) emit(path string, op fsnotify.Op) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.events != nil && !n.closed {
		n.events <- fsnotify.Event{Name: path, Op: op}
	}
}

func (n *fakeNotifier) fail(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.errs <- err
}

func (n *fakeNotifier) state() (dirs map[string]int, closed bool, created int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	dirs = make(map[string]int, len(n.dirs))
	for d, c := range n.dirs {
		dirs[d] = c
	}
	return dirs, n.closed, n.created
}

// external writes content at path as another process would, with the
// events fsnotify reports for it.
func (r *watchRig) external(path, content string, ops ...fsnotify.Op) {
	r.d.mu.Lock()
	r.d.files[path] = []byte(content)
	r.d.mu.Unlock()
	for _, op := range ops {
		r.n.emit(path, op)
	}
}

func (r *watchRig) externalRemove(path string) {
	r.d.mu.Lock()
	delete(r.d.files, path)
	r.d.mu.Unlock()
	r.n.emit(path, fsnotify.Remove)
}

// calls records a watch's calls with the fake time of each.
type calls struct {
	mu    sync.Mutex
	start time.Time
	got   []call
}

type call struct {
	v   string
	err error
	at  time.Duration // since the calls were made
}

func newCalls() *calls { return &calls{start: time.Now()} }

func (c *calls) fn(v string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, call{v, err, time.Since(c.start)})
}

func (c *calls) take() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// elapse moves the bubble's fake clock by d and lets every goroutine run
// until blocked. Inside synctest the timer fires without real time passing.
func elapse(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
	synctest.Wait()
}

func watchT(t *testing.T, f *File[string], c *calls) func() {
	t.Helper()
	stop, err := f.Watch(c.fn)
	require.NoError(t, err)
	return stop
}
