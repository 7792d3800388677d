package statefile

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retryRig is a Store on a fake disk that records when each attempt ran,
// what OnError got and which paths OnRecovered got.
type retryRig struct {
	s *Store
	d *fakeDisk

	mu        sync.Mutex
	attempts  []time.Time // when each traced save or remove ran
	retries   int         // how many of them were retries
	errs      []error     // OnError's
	recovered []string    // OnRecovered's
}

func newRetryRig(t *testing.T) *retryRig {
	t.Helper()
	r := &retryRig{}
	r.s = NewStore(Options{
		OnError: func(err error) { r.mu.Lock(); r.errs = append(r.errs, err); r.mu.Unlock() },
		OnRecovered: func(path string) {
			r.mu.Lock()
			r.recovered = append(r.recovered, path)
			r.mu.Unlock()
		},
		Trace: func(tr SaveTrace) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.attempts = append(r.attempts, time.Now())
			if tr.Retry {
				r.retries++
			}
		},
	})
	r.d = newFakeDisk(r.s, false)
	return r
}

func (r *retryRig) setFail(err error) {
	r.d.mu.Lock()
	r.d.fail = err
	r.d.mu.Unlock()
}

// gaps returns the time between each two attempts in a row.
func (r *retryRig) gaps() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(r.attempts); i++ {
		gaps = append(gaps, r.attempts[i].Sub(r.attempts[i-1]))
	}
	return gaps
}

func (r *retryRig) counts() (attempts, errs, recovered int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.attempts), len(r.errs), len(r.recovered)
}

var errFull = errors.New("no space left (fake)")

// A failed save is retried by a timer while the app runs: the first retry
// a second later, each next one twice as late, then every 30 s (a full disk
// is no busy loop), OnError hearing of it once. Once the disk takes it, the
// retry lands it, OnRecovered says so, and nothing more runs.
func TestRetryBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[int](r.s, osPath("/state/f.json"))
		r.setFail(errFull)
		require.NoError(t, f.Save(1))
		synctest.Wait()
		elapse(10 * time.Minute)
		want := []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
		for len(want) < 24-1 {
			want = append(want, retryMax)
		}
		assert.Equal(t, want, r.gaps(), "the time between attempts in 10 minutes on a full disk")
		_, errs, rec := r.counts()
		assert.Equal(t, 1, errs, "OnError calls for one failure retried 23 times")
		assert.Zero(t, rec, "OnRecovered calls while it fails")
		assert.Zero(t, r.s.runningWorkers(), "writers while waiting for the next retry")

		r.setFail(nil)
		elapse(retryMax)
		got, ok := r.d.content(osPath("/state/f.json"))
		assert.True(t, ok && got == "1\n", "the retry landed the save: got %q", got)
		attempts, _, rec := r.counts()
		assert.Equal(t, 1, rec, "OnRecovered calls once the retry landed")
		elapse(10 * time.Minute)
		after, _, _ := r.counts()
		assert.Equal(t, attempts, after, "attempts after the save landed")
		assert.NoError(t, r.s.Flush(context.Background()))
		require.NoError(t, r.s.Close(context.Background()))
	})
}

// Every Flush tries a failed save again at once, not at the timer's next
// tick, and reports it only if that attempt failed too, with its error;
// a second Flush does not call the path drained while nothing was
// written.
func TestFlushRetriesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[int](r.s, osPath("/state/f.json"))
		r.setFail(errFull)
		require.NoError(t, f.Save(1))
		synctest.Wait()
		for i := range 2 {
			err := r.s.Flush(context.Background())
			var nd *NotDrainedError
			require.ErrorAs(t, err, &nd, "Flush %d", i)
			assert.ErrorIs(t, nd.Failed[osPath("/state/f.json")], errFull, "Flush %d", i)
			assert.ErrorIs(t, f.Flush(context.Background()), errFull, "File.Flush after Store.Flush %d", i)
		}
		attempts, errs, _ := r.counts()
		assert.Equal(t, 5, attempts, "the save and one retry per Flush")
		assert.Equal(t, 1, errs, "OnError calls: the same failure, once")

		errOther := errors.New("input/output error (fake)")
		r.setFail(errOther)
		assert.ErrorIs(t, r.s.Flush(context.Background()), errOther, "the error of the Flush's own attempt")
		_, errs, _ = r.counts()
		assert.Equal(t, 2, errs, "OnError calls after a retry failed differently")

		r.setFail(nil)
		start := time.Now()
		assert.NoError(t, r.s.Flush(context.Background()), "the disk takes it now")
		assert.Zero(t, time.Since(start), "the Flush waited for the timer")
		got, _ := r.d.content(osPath("/state/f.json"))
		assert.Equal(t, "1\n", got)
		assert.NoError(t, r.s.Flush(context.Background()))
		_, _, rec := r.counts()
		assert.Equal(t, 1, rec, "OnRecovered calls")
	})
}

// Close tries a failed save once more, reports it if it still fails, and
// then no timer starts a writer: a closed Store runs nothing on its own. A
// Flush after Close still tries, and lands it once the disk takes it.
func TestCloseStopsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[int](r.s, osPath("/state/f.json"))
		r.setFail(errFull)
		require.NoError(t, f.Save(1))
		synctest.Wait()
		assert.ErrorIs(t, r.s.Close(context.Background()), errFull)
		attempts, _, _ := r.counts()
		assert.Equal(t, 2, attempts, "the save and Close's retry")
		elapse(10 * time.Minute)
		after, _, _ := r.counts()
		assert.Equal(t, attempts, after, "attempts after Close")
		r.setFail(nil)
		assert.NoError(t, r.s.Flush(context.Background()), "a Flush after Close")
		got, _ := r.d.content(osPath("/state/f.json"))
		assert.Equal(t, "1\n", got)
	})
}

// A failed remove is kept and retried like a save. The remove fails on
// the writer first (synctest.Wait: before the Flush, which would
// otherwise race it), then at the Flush's own try, so the timer's next
// wait is twice the first.
func TestRetryRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[int](r.s, osPath("/state/f.json"))
		require.NoError(t, f.Save(1))
		require.NoError(t, r.s.Flush(context.Background()))
		before, _, _ := r.counts()
		r.setFail(errFull)
		require.NoError(t, f.Remove())
		synctest.Wait()
		assert.ErrorIs(t, f.Flush(context.Background()), errFull)
		attempts, _, _ := r.counts()
		require.Equal(t, 2, attempts-before, "the remove's attempt and the Flush's")
		r.setFail(nil)
		elapse(2 * retryFirst)
		_, ok := r.d.content(osPath("/state/f.json"))
		assert.False(t, ok, "the retried remove removed the file")
		assert.NoError(t, f.Flush(context.Background()))
	})
}

// A newer save replaces a failed one waiting for its retry: the old value
// is never written after it.
func TestRetrySupersededByNewerSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[int](r.s, osPath("/state/f.json"))
		r.setFail(errFull)
		require.NoError(t, f.Save(1))
		synctest.Wait()
		require.NoError(t, f.Save(2))
		synctest.Wait()
		r.setFail(nil)
		require.NoError(t, f.Flush(context.Background()))
		elapse(10 * time.Minute)
		assert.Equal(t, []string{osPath("/state/f.json") + "=2"}, r.d.log(), "commits that landed")
		_, errs, rec := r.counts()
		assert.Equal(t, 2, errs, "OnError calls: one per failed save")
		assert.Equal(t, 1, rec, "OnRecovered calls")
	})
}

// An Update queued after a failed save builds on that save's value, the
// newest the app queued, not on the older file; a failed batch is kept as
// its result and retried.
func TestRetryUpdateBuildsOnFailedSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[tally](r.s, osPath("/state/c.json"))
		require.NoError(t, f.Save(tally{N: 1}))
		require.NoError(t, f.Flush(context.Background()))
		r.setFail(errFull)
		require.NoError(t, f.Save(tally{N: 5}))
		synctest.Wait()
		require.NoError(t, f.Update(plus(1)))
		synctest.Wait()
		require.NoError(t, f.Update(plus(10)))
		assert.ErrorIs(t, f.Flush(context.Background()), errFull)
		r.setFail(nil)
		require.NoError(t, f.Flush(context.Background()))
		got, _ := r.d.content(osPath("/state/c.json"))
		assert.JSONEq(t, `{"n":16}`, got)
	})
}

// unencodable fails its encoding every time.
type unencodable struct{}

func (unencodable) MarshalJSON() ([]byte, error) { return nil, errors.New("cannot encode") }

// An encode error is the value's: running it again gives the same error,
// so it is not retried, by the timer or by Flush. Every Flush reports it
// (the file does not hold the newest value) until a newer save lands.
func TestEncodeErrorNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		type v struct {
			Bad *unencodable `json:"bad,omitempty"`
		}
		f, _ := Open[v](r.s, osPath("/state/v.json"))
		require.NoError(t, f.Save(v{Bad: &unencodable{}}))
		for i := range 2 {
			assert.ErrorContains(t, f.Flush(context.Background()), "cannot encode", "Flush %d", i)
		}
		elapse(10 * time.Minute)
		attempts, errs, _ := r.counts()
		assert.Equal(t, 1, attempts, "attempts of an encode error")
		assert.Equal(t, 1, errs, "OnError calls")
		require.NoError(t, f.Save(v{}))
		assert.NoError(t, f.Flush(context.Background()))
		_, _, rec := r.counts()
		assert.Equal(t, 1, rec, "OnRecovered calls after a newer save landed")
	})
}

// An Update whose fn fails is not run again either: the file holds what
// the changes before it made, and Flush reports the fn's error until a
// newer op of the path succeeds.
func TestFailedUpdateNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetryRig(t)
		f, _ := Open[tally](r.s, osPath("/state/c.json"))
		errNo := errors.New("no, says fn")
		calls := 0
		require.NoError(t, f.Update(func(c tally) (tally, error) { calls++; return c, errNo }))
		for i := range 2 {
			assert.ErrorIs(t, f.Flush(context.Background()), errNo, "Flush %d", i)
		}
		elapse(10 * time.Minute)
		assert.Equal(t, 1, calls, "runs of a failed fn")
		require.NoError(t, f.Update(plus(1)))
		assert.NoError(t, f.Flush(context.Background()))
	})
}

// The logging rule: Logger nil means slog.Default, whether or not OnError
// is set, so an app that shows failures in OnError still has them in its
// log; only a Logger that discards silences it.
func TestLoggerRule(t *testing.T) {
	var buf bytes.Buffer
	setDefaultLogger(t, slog.New(slog.NewTextHandler(&buf, nil)))
	for _, tc := range []struct {
		name   string
		opts   Options
		logged bool
	}{
		{"zero options", Options{}, true},
		{"OnError set", Options{OnError: func(error) {}}, true},
		{"a discarding Logger", Options{OnError: func(error) {}, Logger: slog.New(slog.DiscardHandler)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				buf.Reset()
				s := NewStore(tc.opts)
				d := newFakeDisk(s, false)
				d.fail = errFull
				f, _ := Open[int](s, osPath("/state/f.json"))
				require.NoError(t, f.Save(1))
				assert.Error(t, s.Flush(context.Background()))
				assert.Equal(t, tc.logged, bytes.Contains(buf.Bytes(), []byte("save failed")), "logged: %q", buf.String())
				d.mu.Lock()
				d.fail = nil
				d.mu.Unlock()
				require.NoError(t, s.Close(context.Background()))
				assert.Equal(t, tc.logged, bytes.Contains(buf.Bytes(), []byte("saved again")), "logged: %q", buf.String())
			})
		})
	}
}

// With Exclusive, Close releases the lock of a failed path too; a Flush
// after Close then does not write it, as another Store may hold the lock
// by now: it reports the path failed, never saved.
func TestNoRetryAfterCloseReleasedLock(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{Exclusive: true, Logger: slog.New(slog.DiscardHandler)})
		d := newFakeDisk(s, false)
		d.fail = errFull
		f, err := Open[int](s, filepath.Join(dir, "f.json"))
		require.NoError(t, err)
		require.NoError(t, f.Save(1))
		assert.ErrorIs(t, s.Close(context.Background()), errFull)
		d.mu.Lock()
		d.fail = nil
		d.mu.Unlock()
		err = s.Flush(context.Background())
		assert.ErrorContains(t, err, "not tried again after Close released its lock")
		assert.ErrorIs(t, err, errFull, "the failure it still stands for")
		assert.Empty(t, d.log(), "commits after Close released the lock")
		other := NewStore(Options{Exclusive: true})
		_, err = Open[int](other, filepath.Join(dir, "f.json"))
		assert.NoError(t, err, "another Store takes the lock")
		require.NoError(t, other.Close(context.Background()))
	})
}
