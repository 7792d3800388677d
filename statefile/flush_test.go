package statefile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Point 10: when ctx ends first, Flush returns at once with the pending
// paths; the writers go on and nothing queued is dropped.
func TestFlushDeadlineNamesPendingPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		stuck, _ := Open[int](s, osPath("/state/stuck.json"))
		stuck.Save(1)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := s.Flush(ctx)
		assert.Equal(t, 2*time.Second, time.Since(start), "Flush returned at the deadline, not later")
		var nd *NotDrainedError
		require.ErrorAs(t, err, &nd)
		assert.Equal(t, []string{osPath("/state/stuck.json")}, nd.Pending)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, stuck.Flush(ctx), context.DeadlineExceeded, "File.Flush too")
		stuck.Save(2)
		close(d.hold)
		require.NoError(t, s.Flush(context.Background()))
		got, _ := d.content(osPath("/state/stuck.json"))
		assert.Equal(t, "2\n", got, "the save queued after the deadline still landed")
	})
}

// Point 10: Flush waits only for what was queued before the call, and a
// drained path is not reported pending.
func TestFlushReportsOnlyUndrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		ok, _ := Open[int](s, osPath("/state/ok.json"))
		ok.Save(1)
		require.NoError(t, s.Flush(context.Background()))
		d.hold = make(chan struct{})
		stuck, _ := Open[int](s, osPath("/state/stuck.json"))
		stuck.Save(1)
		ok.Save(2)
		synctest.Wait()
		d.hold <- struct{}{} // one of the two commits lands
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := s.Flush(ctx)
		var nd *NotDrainedError
		require.ErrorAs(t, err, &nd)
		assert.Len(t, nd.Pending, 1)
		close(d.hold)
		require.NoError(t, s.Flush(context.Background()))
	})
}

// Point 11: Close flushes, then refuses Save, Remove and Open; Load still
// reads; a second Close returns nil.
func TestCloseFlushesThenRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		f, _ := Open[string](s, osPath("/state/c.json"))
		f.Save("last")
		require.NoError(t, s.Close(context.Background()))
		got, _ := d.content(osPath("/state/c.json"))
		assert.Equal(t, "\"last\"\n", got)
		assert.ErrorIs(t, f.Save("late"), ErrClosed)
		assert.ErrorIs(t, f.Remove(), ErrClosed)
		_, err := Open[string](s, osPath("/state/other.json"))
		assert.ErrorIs(t, err, ErrClosed)
		v, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "last", v)
		assert.NoError(t, s.Close(context.Background()))
	})
}

// Point 11: a Close that times out still drops nothing.
func TestCloseTimeoutDropsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, _ := Open[int](s, osPath("/state/slow.json"))
		f.Save(7)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		assert.ErrorIs(t, s.Close(ctx), context.DeadlineExceeded)
		close(d.hold)
		synctest.Wait()
		got, _ := d.content(osPath("/state/slow.json"))
		assert.Equal(t, "7\n", got)
	})
}

// Point 12: Options.Trace gets one SaveTrace per save that ran, and
// OFFMAIN_TRACE appends one CSV row per save with the header once.
func TestTrace(t *testing.T) {
	csvPath := filepath.Join(t.TempDir(), "trace.csv")
	t.Setenv(traceEnv, csvPath)
	dir := t.TempDir()
	for run := range 2 { // two Stores append to one file: one header
		var mu sync.Mutex
		var traces []SaveTrace
		s := NewStore(Options{Trace: func(tr SaveTrace) { mu.Lock(); traces = append(traces, tr); mu.Unlock() }})
		f, err := Open[string](s, filepath.Join(dir, "t.json"))
		require.NoError(t, err)
		f.Save(strings.Repeat("x", 100))
		require.NoError(t, f.Flush(context.Background()))
		f.Remove()
		require.NoError(t, s.Close(context.Background()))
		require.Len(t, traces, 2, "run %d", run)
		assert.Equal(t, 103, traces[0].Bytes)
		if fineClock {
			assert.Positive(t, traces[0].Sync, "durable save fsynced the file")
		}
		assert.True(t, traces[1].Remove)
		if syncsDir {
			assert.Positive(t, traces[0].DirSync, "durable save fsynced the directory")
			assert.Positive(t, traces[1].DirSync, "durable remove fsynced the directory")
		} else { // Windows: no directory fsync (replace_windows.go, syncDir)
			assert.Zero(t, traces[0].DirSync, "durable save on Windows: no directory fsync")
			assert.Zero(t, traces[1].DirSync, "durable remove on Windows: no directory fsync")
		}
	}
	lines := strings.Split(strings.TrimSpace(readFileT(t, csvPath)), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, strings.Join(traceHeader, ","), lines[0])
	assert.Contains(t, lines[1], ",save,")
	assert.Contains(t, lines[2], ",remove,")
	assert.Equal(t, 1, strings.Count(strings.Join(lines, "\n"), "queued_us"))
	_, err := os.Stat(filepath.Join(dir, "t.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Point 10 with Flushes at once: a failure reaches every Flush that waited
// for it (the app's periodic Flush and the quit hook's, say), not only the
// first to look, and every later Flush reports it again (after trying the
// save once more) for as long as the file does not hold the path's newest
// state. Once the disk takes it, the Flush's retry lands it.
func TestConcurrentFlushesAllSeeAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, _ := Open[int](s, osPath("/state/f.json"))
		errDisk := errors.New("disk says no")
		d.mu.Lock()
		d.fail = errDisk
		d.mu.Unlock()
		f.Save(1)
		synctest.Wait() // the writer holds the commit
		errs := make([]error, 3)
		var wg sync.WaitGroup
		wg.Go(func() { errs[0] = s.Flush(context.Background()) })
		wg.Go(func() { errs[1] = f.Flush(context.Background()) })
		wg.Go(func() { errs[2] = s.Flush(context.Background()) })
		synctest.Wait()      // all three wait on the held commit
		d.hold <- struct{}{} // it fails; the Flushes try once more
		d.hold <- struct{}{} // and that fails too
		wg.Wait()
		for i, err := range errs {
			var nd *NotDrainedError
			require.ErrorAs(t, err, &nd, "Flush %d", i)
			assert.ErrorIs(t, nd.Failed[osPath("/state/f.json")], errDisk, "Flush %d", i)
		}
		close(d.hold)
		assert.ErrorIs(t, s.Flush(context.Background()), errDisk, "a Flush after them: the file still lacks 1")
		assert.ErrorIs(t, f.Flush(context.Background()), errDisk, "and File.Flush")

		d.mu.Lock()
		d.fail = nil
		d.mu.Unlock()
		assert.NoError(t, f.Flush(context.Background()), "the disk takes it now: the Flush's retry lands it")
		got, _ := d.content(osPath("/state/f.json"))
		assert.Equal(t, "1\n", got)
		assert.NoError(t, s.Flush(context.Background()))
	})
}
