package statefile

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// removeFake takes path off d, as a person's rm would.
func (d *fakeDisk) removeFake(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.files, path)
}

// setFail makes every commit of d fail with err (nil: succeed).
func (d *fakeDisk) setFail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = err
}

// A Flush that finds the file removed and cannot write it back reports
// the path, and so does every Flush after it, until one lands the save:
// the failure is not reported once and then forgotten.
func TestFailedRestoreReportedUntilItLands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))

		d.removeFake(path)
		d.setFail(errFull)
		for i := range 3 {
			err := s.Flush(context.Background())
			var nd *NotDrainedError
			require.ErrorAs(t, err, &nd, "Flush %d", i)
			assert.ErrorIs(t, nd.Failed[path], errFull, "Flush %d", i)
		}
		d.setFail(nil)
		require.NoError(t, f.Flush(context.Background()), "the disk has room again")
		got, ok := d.content(path)
		assert.True(t, ok)
		assert.Equal(t, "1\n", got)
		require.NoError(t, s.Close(context.Background()))
	})
}

// A GUI that polls Flush with a short deadline while the disk hangs starts
// one read of the file per path, not one per Flush, and queues one more:
// the checks join the read queued behind the one in flight, and a Flush
// that gave up leaves nothing queued on the writer.
func TestFlushChecksShareOneRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))

		hang := make(chan struct{})
		var reads atomic.Int32
		s.hooks.readFile = func(p string) ([]byte, error) {
			reads.Add(1)
			<-hang
			return d.readFile(p)
		}
		for range 50 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			err := s.Flush(ctx)
			cancel()
			var nd *NotDrainedError
			require.ErrorAs(t, err, &nd)
			assert.Equal(t, []string{path}, nd.Pending)
		}
		assert.EqualValues(t, 1, reads.Load(), "reads started by 50 Flushes")
		assert.Zero(t, f.q.queuedReads(), "checks left queued")
		close(hang)
		synctest.Wait()
		// The Flushes after the first could not trust the read in flight
		// (made before they began): they share one read queued behind it.
		assert.EqualValues(t, 2, reads.Load(), "reads once the disk answered")
		require.NoError(t, f.Flush(context.Background()), "once the disk answers")
		require.NoError(t, s.Close(context.Background()))
	})
}

// Unparsable bytes that a Flush finds in place of the save, and cannot
// move aside, are not written over: the Flush reports the path with a
// *CorruptError, and so do the next Flush, which tries the move again,
// and Close.
func TestUnmovableBytesNotOverwritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The fake disk reads the path; the move aside, a real rename,
		// fails.
		path := unmovablePath(t)
		s := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
		d := newFakeDisk(s, false)
		f, err := Open[int](s, path)
		require.NoError(t, err)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))
		d.mu.Lock()
		d.files[path] = []byte("{torn")
		d.mu.Unlock()
		commits := len(d.log())

		for i := range 2 {
			err := f.Flush(context.Background())
			var ce *CorruptError
			require.ErrorAs(t, err, &ce, "Flush %d", i)
			assert.Empty(t, ce.Aside)
			assert.Error(t, ce.AsideErr)
			got, _ := d.content(path)
			assert.Equal(t, "{torn", got, "Flush %d: the bytes stay", i)
			assert.Len(t, d.log(), commits, "Flush %d: commits over the bytes", i)
		}
		var ce *CorruptError
		assert.ErrorAs(t, s.Close(context.Background()), &ce, "Close reports them too")
		assert.Len(t, d.log(), commits, "commits over the bytes")
	})
}

// With Exclusive, once a closed Store decided to release a path's lock, a
// Flush on another goroutine that finds the file removed writes nothing:
// the path may be another Store's by then.
func TestNoCheckWriteOnceLockReleased(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	s := NewStore(Options{Exclusive: true})
	f, err := Open[int](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save(1))
	require.NoError(t, f.Flush(context.Background()))
	var mu sync.Mutex
	decided := false
	var afterDecided int
	inner := s.hooks.commit
	s.hooks.commit = func(p string, data []byte, tr *SaveTrace) error {
		mu.Lock()
		if decided {
			afterDecided++
		}
		mu.Unlock()
		return inner(p, data, tr)
	}
	var once sync.Once
	var flushErr error
	s.hooks.lockReleased = func() {
		once.Do(func() {
			mu.Lock()
			decided = true
			mu.Unlock()
			require.NoError(t, os.Remove(path))
			flushErr = s.Flush(context.Background())
		})
	}
	require.NoError(t, s.Close(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	require.True(t, decided, "the release was decided")
	assert.NoError(t, flushErr)
	assert.Zero(t, afterDecided, "commits once the lock's release was decided")
	assert.NoFileExists(t, path)
}

// A Flush's check that writes the file again, started on another goroutine
// while Close flushes, is waited for by Close: no commit of the Store runs
// after Close returned.
func TestCloseWaitsForCheckInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))
		var mu sync.Mutex
		closed := false
		var afterClose int
		var hold chan struct{}
		entered := make(chan struct{}, 1)
		inner := s.hooks.commit
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
			if closed {
				afterClose++
			}
			mu.Unlock()
			return err
		}
		flushed := make(chan error, 1)
		s.hooks.closeFlushed = func() {
			d.removeFake(path)
			mu.Lock()
			hold = make(chan struct{})
			mu.Unlock()
			go func() { flushed <- f.Flush(context.Background()) }()
			<-entered // its check writes the file again
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
			t.Errorf("Close returned while a Flush's check of its Store was writing")
		default:
		}
		mu.Lock()
		close(hold)
		mu.Unlock()
		assert.NoError(t, <-closeDone)
		assert.NoError(t, <-flushed)
		mu.Lock()
		assert.Zero(t, afterClose, "commits after Close returned")
		mu.Unlock()
		got, _ := d.content(path)
		assert.Equal(t, "1\n", got)
	})
}

// A Flush trusts no read of the file made before it began: one that read
// the file before this Flush's save landed says nothing of what is there
// now. Flush A gives up while its read, which saw save 1, is slow to
// answer; save 2 lands and the file is removed; Flush B must find it
// gone and write save 2 again.
func TestFlushDoesNotJoinAnOlderRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))

		release := make(chan struct{})
		var once sync.Once
		s.hooks.readFile = func(p string) ([]byte, error) {
			b, err := d.readFile(p)       // the read happens now...
			once.Do(func() { <-release }) // ...and the first one answers late
			return b, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		require.Error(t, s.Flush(ctx), "Flush A gives up on its read")
		cancel()

		require.NoError(t, f.Save(2))
		synctest.Wait()
		got, _ := d.content(path)
		require.Equal(t, "2\n", got)
		d.removeFake(path)

		res := make(chan error, 1)
		go func() { res <- s.Flush(context.Background()) }() // Flush B
		synctest.Wait()
		close(release)
		require.NoError(t, <-res)
		got, ok := d.content(path)
		assert.True(t, ok, "Flush B returned nil: the file must be there")
		assert.Equal(t, "2\n", got, "and hold the newest save")
		require.NoError(t, s.Close(context.Background()))
	})
}

// A Flush on another goroutine whose check is still reading the file when
// Close ends its retries is waited for: no check writes after Close
// returned (without giving up on its ctx).
func TestCloseWaitsForCheckRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))
		var mu sync.Mutex
		closed, afterClose := false, 0
		inner := s.hooks.commit
		s.hooks.commit = func(p string, data []byte, tr *SaveTrace) error {
			mu.Lock()
			if closed {
				afterClose++
			}
			mu.Unlock()
			return inner(p, data, tr)
		}
		release, reading := make(chan struct{}), make(chan struct{})
		flushed := make(chan error, 1)
		s.hooks.closeFlushed = func() {
			d.removeFake(path)
			var once sync.Once
			s.hooks.readFile = func(p string) ([]byte, error) {
				b, err := d.readFile(p)
				once.Do(func() {
					close(reading)
					<-release
				})
				return b, err
			}
			go func() { flushed <- f.Flush(context.Background()) }()
			<-reading
		}
		closeDone := make(chan error, 1)
		go func() {
			closeDone <- s.Close(context.Background())
			mu.Lock()
			closed = true
			mu.Unlock()
		}()
		synctest.Wait()
		select {
		case err := <-closeDone:
			t.Fatalf("Close returned (%v) while a Flush's check was reading", err)
		default:
		}
		close(release)
		require.NoError(t, <-closeDone)
		require.NoError(t, <-flushed)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Zero(t, afterClose, "commits after Close returned")
		got, _ := d.content(path)
		assert.Equal(t, "1\n", got, "the check wrote the save again before Close returned")
	})
}

// A restore that fails the same way at each Flush is reported to OnError
// once, as a retry's failure is; OnRecovered hears when it lands, and a
// later save that lands is no news.
func TestRestoreFailureReportedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		errs, recs := 0, 0
		s := NewStore(Options{Logger: slog.New(slog.DiscardHandler),
			OnError:     func(error) { mu.Lock(); errs++; mu.Unlock() },
			OnRecovered: func(string) { mu.Lock(); recs++; mu.Unlock() }})
		d := newFakeDisk(s, false)
		path := osPath("/state/f.json")
		f, _ := Open[int](s, path)
		require.NoError(t, f.Save(1))
		require.NoError(t, f.Flush(context.Background()))
		d.removeFake(path)
		d.setFail(errFull)
		for range 3 {
			require.Error(t, s.Flush(context.Background()))
		}
		counts := func() [2]int { mu.Lock(); defer mu.Unlock(); return [2]int{errs, recs} }
		assert.Equal(t, [2]int{1, 0}, counts(), "OnError and OnRecovered calls after 3 Flushes failing the same way")
		d.setFail(nil)
		require.NoError(t, s.Flush(context.Background()))
		assert.Equal(t, [2]int{1, 1}, counts(), "after the restore landed")
		got, _ := d.content(path)
		assert.Equal(t, "1\n", got)
		require.NoError(t, f.Save(2))
		require.NoError(t, s.Flush(context.Background()))
		assert.Equal(t, [2]int{1, 1}, counts(), "after a later save")
		require.NoError(t, s.Close(context.Background()))
	})
}
