package statefile

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a Flush reports when retries run beside it: a path is drained only
// if its file holds the path's last value after an attempt the Flush saw.

// blockingRead makes the Store's reads fail with EIO until cleared, and
// lets a test hold the next read on a channel.
type blockingRead struct {
	mu   sync.Mutex
	err  error
	hold chan struct{}
}

func (b *blockingRead) install(s *Store) {
	inner := s.hooks.readFile
	s.hooks.readFile = func(p string) ([]byte, error) {
		b.mu.Lock()
		h := b.hold
		b.mu.Unlock()
		if h != nil {
			<-h
		}
		b.mu.Lock()
		err := b.err
		b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return inner(p)
	}
}

func (b *blockingRead) set(err error, hold chan struct{}) {
	b.mu.Lock()
	b.err, b.hold = err, hold
	b.mu.Unlock()
}

// An Update whose base could not be read waits, kept, for its retry. The
// timer's retry reads the base and runs fn, which fails: nothing is to be
// written, and the path stays failed with fn's error. A Flush that took
// its mark while that retry was in flight asked for one more retry; that
// one has nothing kept to write and must not clear the failure (the old
// code ran it as a success: every later Flush said drained and
// OnRecovered fired, though fn's result was never written).
func TestFlushDuringTimerRetryKeepsFnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		var rd blockingRead
		rd.set(&fs.PathError{Op: "open", Path: "/state/f.json", Err: syscall.EIO}, nil)
		rd.install(r.s)
		f, _ := Open[int](r.s, osPath("/state/f.json"))
		errRejected := errors.New("value rejected")
		require.NoError(t, f.Update(func(int) (int, error) { return 0, errRejected }))
		synctest.Wait()
		hold := make(chan struct{})
		rd.set(syscall.EIO, hold)
		elapse(retryFirst) // the timer's retry blocks reading the base
		done := make(chan error)
		go func() { done <- f.Flush(context.Background()) }()
		synctest.Wait() // that Flush took its mark, the retry in flight
		rd.set(nil, nil)
		close(hold)
		during := <-done
		synctest.Wait()
		after := f.Flush(context.Background())
		assert.ErrorIs(t, during, errRejected, "the Flush taken during the retry")
		assert.ErrorIs(t, after, errRejected, "a later Flush: fn's result was never written")
		_, errs, rec := r.counts()
		assert.Equal(t, 2, errs, "OnError calls (the read's EIO, then fn's error)")
		assert.Zero(t, rec, "OnRecovered calls: the path never saved")
		assert.ErrorIs(t, r.s.Close(context.Background()), errRejected, "Close")
	})
}

// A Flush taken while the timer's retry of a save is in flight waits for
// that attempt and runs no second, empty one.
func TestFlushDuringTimerRetryRunsNoEmptyAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		path := osPath("/state/f.json")
		f, _ := Open[int](r.s, path)
		var mu sync.Mutex
		var h chan struct{}
		inner := r.s.hooks.commit
		r.s.hooks.commit = func(p string, data []byte, tr *SaveTrace) error {
			mu.Lock()
			hold := h
			mu.Unlock()
			if hold != nil {
				<-hold
			}
			return inner(p, data, tr)
		}
		r.setFail(errFull)
		require.NoError(t, f.Save(1))
		synctest.Wait()
		mu.Lock()
		h = make(chan struct{})
		mu.Unlock()
		elapse(retryFirst) // the timer's retry starts and blocks in commit
		done := make(chan error)
		go func() { done <- f.Flush(context.Background()) }()
		synctest.Wait()
		r.setFail(nil)
		mu.Lock()
		close(h)
		h = nil
		mu.Unlock()
		assert.NoError(t, <-done)
		synctest.Wait()
		got, _ := r.d.content(path)
		assert.Equal(t, "1\n", got)
		attempts, _, rec := r.counts()
		f.q.mu.Lock()
		started := f.q.retry.started
		f.q.mu.Unlock()
		assert.Equal(t, 2, attempts, "traced attempts: the save and its retry")
		assert.Equal(t, uint64(2), started, "attempts started: no empty one after the retry")
		assert.Equal(t, 1, rec, "OnRecovered calls")
		require.NoError(t, r.s.Close(context.Background()))
	})
}

// A batch [Update that works, Update whose fn fails] whose write fails is
// kept and retried. Once the retry lands, the file holds the first fn's
// result, and fn's error stays in Flush, as it would have had the disk
// taken the first write: no newer op of the path succeeded. OnError heard
// of it once; OnRecovered waits for a newer op that succeeds.
func TestRetryKeepsFailedFnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		path := osPath("/state/f.json")
		f, _ := Open[int](r.s, path)
		// The two Updates must reach the writer as one batch: it is held in
		// the commit of a save before them while they are queued, or it
		// could take the first alone.
		held := make(chan struct{})
		r.d.holds = map[string]chan struct{}{path: held}
		require.NoError(t, f.Save(0))
		synctest.Wait() // the writer waits in the save's commit
		errRejected := errors.New("value rejected")
		require.NoError(t, f.Update(func(v int) (int, error) { return v + 1, nil }))
		require.NoError(t, f.Update(func(int) (int, error) { return 0, errRejected }))
		held <- struct{}{} // the save lands,
		synctest.Wait()    // and the batch's commit waits on held again
		r.setFail(errFull)
		close(held)
		err := f.Flush(context.Background())
		assert.ErrorIs(t, err, errRejected, "Flush on the full disk")
		assert.ErrorIs(t, err, errFull, "Flush on the full disk")
		r.setFail(nil)
		err = f.Flush(context.Background())
		assert.ErrorIs(t, err, errRejected, "Flush once the retry landed: fn's error stays")
		assert.NotErrorIs(t, err, errFull, "the write's error is gone")
		got, _ := r.d.content(path)
		assert.Equal(t, "1\n", got, "the file holds the first fn's result")
		_, errs, rec := r.counts()
		assert.Equal(t, 1, errs, "OnError calls")
		assert.Zero(t, rec, "OnRecovered calls while fn's error stands")
		require.NoError(t, f.Update(func(v int) (int, error) { return v + 1, nil }))
		assert.NoError(t, f.Flush(context.Background()), "a newer Update succeeded")
		_, _, rec = r.counts()
		assert.Equal(t, 1, rec, "OnRecovered calls")
		require.NoError(t, r.s.Close(context.Background()))
	})
}

// OnRecovered says the path's newest state is on disk again: a Flush it
// calls (on the writer) reports the path drained.
func TestFlushFromOnRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s *Store
		got := make(chan error, 4)
		s = NewStore(Options{
			Logger: slog.New(slog.DiscardHandler),
			OnRecovered: func(string) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				got <- s.Flush(ctx)
			},
		})
		d := newFakeDisk(s, false)
		f, _ := Open[int](s, osPath("/state/f.json"))
		d.fail = errFull
		require.NoError(t, f.Save(1))
		assert.ErrorIs(t, f.Flush(context.Background()), errFull)
		d.mu.Lock()
		d.fail = nil
		d.mu.Unlock()
		assert.NoError(t, f.Flush(context.Background()), "the outer Flush")
		require.Len(t, got, 1, "OnRecovered calls")
		assert.NoError(t, <-got, "the Flush inside OnRecovered")
		require.NoError(t, s.Close(context.Background()))
	})
}

// A Durable remove whose unlink landed but whose directory fsync failed is
// retried; the retry finds the file gone (ENOENT) and must still fsync the
// directory before it reports the remove done: until then a power cut can
// bring the file back. The same for a save whose rename landed but whose
// directory fsync failed.
func TestRetrySyncsDirectory(t *testing.T) {
	if !syncsDir {
		t.Skip("Windows has no directory fsync to fail (replace_windows.go, syncDir): a move is made durable with MOVEFILE_WRITE_THROUGH")
	}
	for _, remove := range []bool{true, false} {
		name := "save"
		if remove {
			name = "remove"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			s := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
			f, err := Open[int](s, path)
			require.NoError(t, err)
			require.NoError(t, f.Save(1))
			require.NoError(t, f.Flush(context.Background()))
			var mu sync.Mutex
			syncs, failNext := 0, true
			s.hooks.syncDir = func(d string) error {
				mu.Lock()
				defer mu.Unlock()
				syncs++
				if failNext {
					failNext = false
					return &os.PathError{Op: "sync", Path: d, Err: syscall.EIO}
				}
				return syncDir(d)
			}
			if remove {
				require.NoError(t, f.Remove())
			} else {
				require.NoError(t, f.Save(2))
			}
			// The first attempt's directory fsync fails. A Flush retries it
			// at once if that attempt started before the Flush did; else
			// it reports EIO and the next Flush (the quit's) retries.
			if err := f.Flush(context.Background()); err != nil {
				require.ErrorIs(t, err, syscall.EIO)
				require.NoError(t, f.Flush(context.Background()))
			}
			mu.Lock()
			assert.Equal(t, 2, syncs, "directory fsyncs: the failed one, then the retry's")
			mu.Unlock()
			if remove {
				assert.NoFileExists(t, path)
			} else {
				assert.Equal(t, "2\n", readFileT(t, path))
			}
			require.NoError(t, s.Close(context.Background()))
		})
	}
}

// A Durable remove of a file that is missing already still syncs the
// directory (the unlink may be another program's, never synced); a
// missing directory is no error.
func TestRemoveMissingSyncsDirectory(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(Options{})
	syncs := 0
	s.hooks.syncDir = func(d string) error { syncs++; return syncDir(d) }
	f, err := Open[int](s, filepath.Join(dir, "f.json"))
	require.NoError(t, err)
	require.NoError(t, f.Remove())
	require.NoError(t, f.Flush(context.Background()))
	want := 1
	if !syncsDir {
		want = 0 // Windows: no directory fsync (replace_windows.go, syncDir)
	}
	assert.Equal(t, want, syncs, "directory fsyncs")
	g, err := Open[int](s, filepath.Join(dir, "gone", "g.json"))
	require.NoError(t, err)
	require.NoError(t, g.Remove())
	assert.NoError(t, g.Flush(context.Background()), "a remove in a missing directory")
	require.NoError(t, s.Close(context.Background()))
}

// A retry that a Flush on another goroutine starts while Close flushes is
// waited for by Close: Close returns only once it ended, and no commit of
// the Store runs after Close returned (the old code returned while such a
// retry still wrote).
func TestCloseWaitsForRetryInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		var mu sync.Mutex
		var closed bool
		var afterClose, commits int
		inner := s.hooks.commit
		entered := make(chan struct{}, 1)
		var hold chan struct{}
		s.hooks.commit = func(p string, data []byte, tr *SaveTrace) error {
			mu.Lock()
			h := hold
			mu.Unlock()
			if h != nil {
				entered <- struct{}{}
				<-h
			}
			err := inner(p, data, tr)
			mu.Lock()
			if err == nil {
				commits++
			}
			if closed {
				afterClose++
			}
			mu.Unlock()
			return err
		}
		d.fail = errFull
		require.NoError(t, f.Save(1))
		require.ErrorIs(t, f.Flush(context.Background()), errFull)
		flushed := make(chan error, 1)
		s.hooks.closeFlushed = func() {
			// Close's own flush is done, the path still failed. The disk
			// has room again, and another goroutine's Flush retries.
			d.mu.Lock()
			d.fail = nil
			d.mu.Unlock()
			mu.Lock()
			hold = make(chan struct{})
			mu.Unlock()
			go func() { flushed <- s.Flush(context.Background()) }()
			<-entered // that retry writes
		}
		closeDone := make(chan error, 1)
		go func() {
			err := s.Close(context.Background())
			mu.Lock()
			closed = true
			mu.Unlock()
			closeDone <- err
		}()
		synctest.Wait()
		select {
		case <-closeDone:
			t.Errorf("Close returned while a retry of its Store was writing")
		default:
		}
		mu.Lock()
		close(hold)
		mu.Unlock()
		assert.ErrorIs(t, <-closeDone, errFull, "Close reports the failure its flush saw")
		assert.NoError(t, <-flushed, "the other goroutine's Flush: its retry landed")
		mu.Lock()
		assert.Equal(t, 1, commits, "commits that landed: the retry's")
		assert.Zero(t, afterClose, "commits after Close returned")
		mu.Unlock()
		got, _ := d.content(path)
		assert.Equal(t, "1\n", got)
	})
}

// With Exclusive, a closed Store's writer releases a drained path's lock
// when it goes idle. A Flush on another goroutine that asks for a retry
// once that release is decided writes nothing: the lock is, or is about
// to be, free for another Store. (The old code decided and released in
// two steps, and a retry started between them wrote the path after the
// release.)
func TestNoRetryOnceLockReleaseDecided(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(Options{Exclusive: true, Logger: slog.New(slog.DiscardHandler)})
	f, err := Open[int](s, filepath.Join(dir, "f.json"))
	require.NoError(t, err)
	var mu sync.Mutex
	fail, decided := true, false
	var commits, afterDecided int
	s.hooks.commit = func(string, []byte, *SaveTrace) error {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return errFull
		}
		commits++
		if decided {
			afterDecided++
		}
		return nil
	}
	require.NoError(t, f.Save(1))
	require.ErrorIs(t, f.Flush(context.Background()), errFull)
	var once sync.Once
	var flushErr error
	hookDone := make(chan struct{})
	s.hooks.lockReleased = func() {
		once.Do(func() {
			defer close(hookDone)
			mu.Lock()
			fail, decided = false, true // the disk has room again
			mu.Unlock()
			done := make(chan struct{})
			go func() { flushErr = s.Flush(context.Background()); close(done) }()
			<-done
		})
	}
	assert.ErrorIs(t, s.Close(context.Background()), errFull)
	// The hook runs on the writer, which may still be in it when Close
	// returns: Close waits for the release's decision, not for the hook.
	select {
	case <-hookDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the lock's release was never decided")
	}
	mu.Lock()
	defer mu.Unlock()
	require.True(t, decided, "the release was decided")
	assert.ErrorContains(t, flushErr, "not tried again after Close released its lock")
	assert.Zero(t, afterDecided, "commits once the lock's release was decided")
	assert.False(t, f.q.lock.held())
}

// The invariant under churn: saves, Updates and removes queued without
// pause while the disk fails half the commits at random moments, and
// Flushes in between. Every Flush that returns nil finds the file holding
// exactly the value (or the absence) the ops queued before it leave.
func TestFlushNilMeansFileHoldsLastValue(t *testing.T) {
	s := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
	d := newFakeDisk(s, false)
	var failing atomic.Bool
	inner := s.hooks.commit
	s.hooks.commit = func(path string, data []byte, tr *SaveTrace) error {
		if failing.Load() && rand.IntN(2) == 0 {
			return errFull
		}
		return inner(path, data, tr)
	}
	path := osPath("/x/f.json")
	f, _ := Open[int](s, path)
	var mu sync.Mutex // held by the op loop for each op and its model update, and by the check
	v, removed := 0, true
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			switch rand.IntN(5) {
			case 0, 1:
				_ = f.Save(i)
				v, removed = i, false
			case 2, 3:
				_ = f.Update(func(x int) (int, error) { return (x*3 + 1) % 1000003, nil })
				v, removed = (v*3+1)%1000003, false
			case 4:
				_ = f.Remove()
				v, removed = 0, true
			}
			mu.Unlock()
			runtime.Gosched()
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			failing.Store(rand.IntN(3) == 0)
			runtime.Gosched()
		}
	})
	flushes, drained, bad := 0, 0, 0
	for ; flushes < 3000; flushes++ {
		mu.Lock()
		wantV, wantRemoved := v, removed
		err := f.Flush(context.Background())
		if err == nil {
			drained++
			got, ok := d.content(path)
			n, _ := strconv.Atoi(strings.TrimSpace(got))
			if ok == wantRemoved || (!wantRemoved && n != wantV) {
				bad++
				if bad < 5 {
					t.Errorf("Flush %d returned nil, but the file holds %q (exists %v); want %d (removed %v)", flushes, got, ok, wantV, wantRemoved)
				}
			}
		}
		mu.Unlock()
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	failing.Store(false)
	t.Logf("%d flushes, %d returned nil, %d of those wrong", flushes, drained, bad)
	assert.NotZero(t, drained, "Flushes that returned nil")
	require.NoError(t, s.Close(context.Background()))
}
