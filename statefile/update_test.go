package statefile

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tally struct {
	N int `json:"n"`
}

func plus(k int) func(tally) (tally, error) {
	return func(c tally) (tally, error) { c.N += k; return c, nil }
}

// heldFile opens /state/c.json on a fake disk whose commits wait for
// d.hold, and parks the writer inside a first save of first.
func heldFile(t *testing.T, opts Options, first tally) (*Store, *fakeDisk, *File[tally]) {
	t.Helper()
	s := NewStore(opts)
	d := newFakeDisk(s, true)
	f, err := Open[tally](s, osPath("/state/c.json"))
	require.NoError(t, err)
	require.NoError(t, f.Save(first))
	synctest.Wait() // the writer is inside the held commit
	return s, d, f
}

// Updates and Saves queued while the writer is busy apply in call order:
// an Update sees the Save before it, a Save after an Update replaces its
// result only after fn ran, and the next Update sees that Save.
func TestUpdateOrderWithSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, d, f := heldFile(t, Options{}, tally{N: 1})
		var seen []int
		record := func(k int) func(tally) (tally, error) {
			return func(c tally) (tally, error) { seen = append(seen, c.N); c.N += k; return c, nil }
		}
		require.NoError(t, f.Update(record(1)))  // sees 1 (the save in progress)
		require.NoError(t, f.Save(tally{N: 10})) // replaces 2
		require.NoError(t, f.Update(record(5)))  // sees 10
		require.NoError(t, f.Save(tally{N: 7}))
		require.NoError(t, f.Save(tally{N: 100})) // replaces 7 without a write
		require.NoError(t, f.Update(record(1)))   // sees 100
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
		assert.Equal(t, []int{1, 10, 100}, seen, "values the fns got")
		assert.Equal(t, []string{osPath("/state/c.json") + `={"n":1}`, osPath("/state/c.json") + `={"n":101}`}, d.log(), "one write for the batch")
		got, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tally{N: 101}, got)
	})
}

// Remove then Update: the Update starts from the default, and the file is
// written again; Update then Remove: the file ends removed, fn still ran.
func TestUpdateOrderWithRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, err := OpenWith(s, osPath("/state/c.json"), FileOptions[tally]{Default: func() tally { return tally{N: 40} }})
		require.NoError(t, err)
		require.NoError(t, f.Save(tally{N: 1}))
		synctest.Wait()
		require.NoError(t, f.Remove())
		require.NoError(t, f.Update(plus(2)))
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
		got, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tally{N: 42}, got, "Update after Remove starts from the default")

		var ran atomic.Bool
		d.hold = make(chan struct{})
		require.NoError(t, f.Save(tally{N: 5}))
		synctest.Wait()
		require.NoError(t, f.Update(func(c tally) (tally, error) { ran.Store(true); return c, nil }))
		require.NoError(t, f.Remove())
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
		assert.True(t, ran.Load(), "an Update before a Remove was skipped")
		_, ok := d.content(osPath("/state/c.json"))
		assert.False(t, ok, "the file should end removed")
	})
}

// A Load queued after an Update sees its result; one queued before it
// does not.
func TestUpdateOrderWithLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, d, f := heldFile(t, Options{}, tally{N: 1})
		before := make(chan tally, 1)
		go func() { v, _ := f.Load(context.Background()); before <- v }()
		synctest.Wait() // the Load is queued
		require.NoError(t, f.Update(plus(1)))
		close(d.hold)
		after, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tally{N: 1}, <-before, "Load queued before the Update")
		assert.Equal(t, tally{N: 2}, after, "Load queued after the Update")
	})
}

// No Update is skipped: a thousand queued while the writer is busy all
// run, in order, each on the result of the one before.
func TestUpdateNeverSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, d, f := heldFile(t, Options{}, tally{N: 0})
		for range 1000 {
			require.NoError(t, f.Update(plus(1)))
		}
		close(d.hold)
		got, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tally{N: 1000}, got)
		assert.Len(t, d.log(), 2, "got %v, want the first save and one write for the batch", d.log())
	})
}

// An fn error writes nothing, goes to OnError, and reaches Flush when it
// is the newest op of the path; one superseded inside a batch does not
// undo the changes around it.
func TestUpdateFnError(t *testing.T) {
	boom := errors.New("boom")
	fail := func(tally) (tally, error) { return tally{N: -1}, boom }
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reported []error
		opts := Options{OnError: func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }}
		_, d, f := heldFile(t, opts, tally{N: 1})
		require.NoError(t, f.Update(fail))
		close(d.hold)
		err := f.Flush(context.Background())
		require.ErrorIs(t, err, boom, "Flush after a failed Update")
		assert.Equal(t, []string{osPath("/state/c.json") + `={"n":1}`}, d.log(), "a failed Update wrote")

		require.NoError(t, f.Update(plus(1)))
		require.NoError(t, f.Update(fail))
		require.NoError(t, f.Update(plus(1)))
		require.NoError(t, f.Flush(context.Background()), "the newest Update succeeded")
		got, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tally{N: 3}, got, "the failed fn's result was dropped, the others kept")
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, reported, 2, "OnError calls")
		for _, err := range reported {
			assert.ErrorIs(t, err, boom)
		}
	})
}

// A batch whose last Update fails after an earlier one changed the value
// still writes; when that write fails too, Flush returns both errors,
// reachable with errors.Is, on one line.
func TestUpdateFnAndWriteErrors(t *testing.T) {
	boom := errors.New("boom")
	full := errors.New("disk full\nsecond line")
	fail := func(tally) (tally, error) { return tally{N: -1}, boom }
	synctest.Test(t, func(t *testing.T) {
		opts := Options{Logger: slog.New(slog.DiscardHandler)}
		_, d, f := heldFile(t, opts, tally{N: 1})
		require.NoError(t, f.Update(plus(1)))
		require.NoError(t, f.Update(fail))
		d.mu.Lock()
		d.fail = full
		d.mu.Unlock()
		close(d.hold)
		err := f.Flush(context.Background())
		require.ErrorIs(t, err, boom, "the last Update's error")
		require.ErrorIs(t, err, full, "the write's error")
		assert.NotContains(t, err.Error(), "\n", "one line")
		assert.Contains(t, err.Error(), "disk full | second line", "the write's error, folded")
	})
}

// Many goroutines incrementing one real file through Update lose nothing.
func TestUpdateConcurrent(t *testing.T) {
	s := NewStore(Options{Durability: Atomic})
	f, err := Open[tally](s, filepath.Join(t.TempDir(), "c.json"))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				assert.NoError(t, f.Update(plus(1)))
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(context.Background()))
	assert.JSONEq(t, `{"n":1600}`, readFileT(t, f.Path()))
}

// An Update on a corrupt file moves the bytes aside, reports them, and
// goes on from the default.
func TestUpdateCorruptFile(t *testing.T) {
	var reported atomic.Pointer[error]
	s := NewStore(Options{OnError: func(err error) { reported.Store(&err) }})
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"n":`), 0o600))
	f, err := OpenWith(s, path, FileOptions[tally]{Default: func() tally { return tally{N: 10} }})
	require.NoError(t, err)
	require.NoError(t, f.Update(plus(1)))
	require.NoError(t, s.Close(context.Background()))
	assert.JSONEq(t, `{"n":11}`, readFileT(t, path))
	require.NotNil(t, reported.Load(), "OnError was not called")
	assert.ErrorIs(t, *reported.Load(), ErrCorrupt)
	matches, _ := filepath.Glob(path + corruptSuffix + "*")
	assert.Len(t, matches, 1, "corrupt copies")
}

func TestUpdateClosedAndNil(t *testing.T) {
	s := NewStore(Options{})
	f, err := Open[tally](s, filepath.Join(t.TempDir(), "c.json"))
	require.NoError(t, err)
	assert.Panics(t, func() { _ = f.Update(nil) })
	require.NoError(t, s.Close(context.Background()))
	assert.ErrorIs(t, f.Update(plus(1)), ErrClosed)
}
