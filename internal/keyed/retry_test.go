package keyed

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/fakefile"
	"github.com/offmain/offmain/statefile"
)

// flaky is a fake file whose reads fail until told otherwise, as a
// directory not readable yet or a network home not mounted yet do. It
// records when each read ran.
type flaky struct {
	*fakefile.File[map[string]string]
	start time.Time

	mu    sync.Mutex // protects the fields below
	err   error
	value map[string]string
	reads []time.Duration
}

func newFlaky(err error) *flaky {
	return &flaky{File: &fakefile.File[map[string]string]{Name: "/s/kv.json", Start: time.Now()}, start: time.Now(), err: err}
}

func (f *flaky) Load(context.Context) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, time.Since(f.start))
	if f.err != nil {
		return nil, f.err
	}
	return f.value, nil
}

// heal makes the reads succeed from now on, with value as the file.
func (f *flaky) heal(value map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err, f.value = nil, value
}

func (f *flaky) readTimes() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.reads...)
}

func errAccess() error {
	return &fs.PathError{Op: "open", Path: "/s/kv.json", Err: syscall.EACCES}
}

func pause(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
	synctest.Wait()
}

func loaded(c *Core[map[string]string]) bool {
	select {
	case <-c.Loaded():
		return true
	default:
		return false
	}
}

// TestReadRetried: a read that fails (EACCES) is tried again with backoff;
// the edits made meanwhile stay in memory and nothing is saved; once a
// read succeeds the file's keys are merged under them and saved, Loaded
// closes and Load returns nil.
func TestReadRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(errAccess())
		c, s := openKV(t, f)
		err := c.Load(t.Context())
		require.ErrorIs(t, err, fs.ErrPermission, "Load: got %v, want the read's error", err)
		assert.ErrorContains(t, err, "kv: not saving until the file can be read")
		assert.False(t, loaded(c), "Loaded closed after a failed read")

		s.set(c, "a", "mine")
		pause(5 * time.Second) // the settle, and retries at 0.25, 0.75, 1.75, 3.75 s
		assert.Empty(t, f.Ops(), "saved over a file that could not be read")
		assert.Equal(t, "mine", s.m["a"], "the edit is kept in memory")

		f.heal(map[string]string{"a": "file", "b": "file"})
		pause(4 * time.Second) // the next timed read, at 7.75 s
		require.True(t, loaded(c), "Loaded: got open, want closed once a read succeeded")
		assert.NoError(t, c.Load(t.Context()), "Load after the recovery")
		ops := f.Ops()
		require.Len(t, ops, 1, "saves once the file was read")
		assert.Equal(t, map[string]string{"a": "mine", "b": "file"}, ops[0].Value, "the file's keys under the edit")
		assert.NoError(t, c.Close(t.Context()))
	})
}

// TestReadBackoff: the reads of a file that stays unreadable are spaced
// out, from RetryFirst doubling up to RetryMax, with no busy loop: in an
// hour, about 130 reads.
func TestReadBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(errAccess())
		c, _ := openKV(t, f)
		pause(time.Hour)
		reads := f.readTimes()
		want := []time.Duration{0, 250 * time.Millisecond, 750 * time.Millisecond, 1750 * time.Millisecond,
			3750 * time.Millisecond, 7750 * time.Millisecond, 15750 * time.Millisecond, 31750 * time.Millisecond,
			61750 * time.Millisecond, 91750 * time.Millisecond}
		require.Greater(t, len(reads), len(want))
		assert.Equal(t, want, reads[:len(want)], "read times: got, want")
		for i := len(want); i < len(reads); i++ {
			assert.Equal(t, RetryMax, reads[i]-reads[i-1], "gap before read %d", i)
		}
		assert.Len(t, reads, 8+int((time.Hour-31750*time.Millisecond)/RetryMax), "reads in an hour")
		require.NoError(t, c.Close(t.Context()), "Close with nothing edited")
	})
}

// TestFlushReadsAgain: a Flush with an edit unsaved reads a failed file
// again at once, so a quit after the cause went away saves; while it still
// fails, Flush says why, and nothing is saved.
func TestFlushReadsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(errAccess())
		c, s := openKV(t, f)
		require.Error(t, c.Load(t.Context()))
		s.set(c, "a", "mine")
		pause(100 * time.Millisecond) // before the settle and the first timed read

		n := len(f.readTimes())
		err := c.Flush(t.Context())
		assert.ErrorIs(t, err, fs.ErrPermission, "Flush while the file cannot be read: got %v", err)
		assert.Len(t, f.readTimes(), n+1, "Flush reads again at once")
		assert.Empty(t, f.Ops())

		f.heal(map[string]string{"b": "file"})
		require.NoError(t, c.Flush(t.Context()), "Flush once the file can be read")
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, map[string]string{"a": "mine", "b": "file"}, ops[0].Value)
		assert.NoError(t, c.Close(t.Context()))
	})
}

// TestFlushNothingEdited: with no edit since Open, a Flush has nothing to
// save while the file cannot be read, and drains.
func TestFlushNothingEdited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(errAccess())
		c, _ := openKV(t, f)
		require.Error(t, c.Load(t.Context()))
		assert.NoError(t, c.Flush(t.Context()))
		assert.NoError(t, c.Close(t.Context()))
	})
}

// TestCloseEndsRetries: after Close no timed read runs; a Close with an
// edit unsaved reads once more itself.
func TestCloseEndsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(errAccess())
		c, s := openKV(t, f)
		require.Error(t, c.Load(t.Context()))
		s.set(c, "a", "mine")
		assert.ErrorIs(t, c.Close(t.Context()), fs.ErrPermission, "Close: the edit is not saved")
		n := len(f.readTimes())
		pause(time.Hour)
		assert.Len(t, f.readTimes(), n, "reads after Close")
	})
}

// TestNewerVersionNotRetried: a newer release's file is final: no read
// again, Loaded closes, and an edit is reported unsaved, never saved.
func TestNewerVersionNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(&statefile.VersionError{Path: "/s/kv.json", Version: 9, Newest: 1})
		c, s := openKV(t, f)
		err := c.Load(t.Context())
		require.ErrorIs(t, err, statefile.ErrNewerVersion)
		assert.True(t, loaded(c), "Loaded closes: reading again would not change it")
		assert.NoError(t, c.Flush(t.Context()), "nothing edited, nothing lost")
		s.set(c, "a", "mine")
		err = c.Flush(t.Context())
		assert.ErrorIs(t, err, statefile.ErrNewerVersion, "Flush with an edit: got %v", err)
		pause(time.Hour)
		assert.Len(t, f.readTimes(), 1, "reads of a newer release's file")
		assert.Empty(t, f.Ops())
		assert.Error(t, c.Close(t.Context()))
	})
}

// TestEditReadsAgain: an edit's save, due while the file cannot be read,
// reads it again at once rather than at the next timed read.
func TestEditReadsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFlaky(errAccess())
		c, s := openKV(t, f)
		pause(time.Minute) // the backoff has grown to RetryMax
		n := len(f.readTimes())
		f.heal(map[string]string{"b": "file"})
		s.set(c, "a", "mine")
		require.True(t, c.Scheduler().Flush(), "the edit's save")
		synctest.Wait()
		assert.Len(t, f.readTimes(), n+1, "a read at the edit's save")
		ops := f.Ops()
		require.Len(t, ops, 1, fmt.Sprintf("saves: got %d, want the merge's", len(ops)))
		assert.Equal(t, map[string]string{"a": "mine", "b": "file"}, ops[0].Value)
		assert.NoError(t, c.Close(t.Context()))
	})
}
