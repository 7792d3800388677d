package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hooked is a saved value whose MarshalJSON calls hook on the writer.
type hooked struct {
	N    int
	hook func()
}

func (h hooked) MarshalJSON() ([]byte, error) {
	if h.hook != nil {
		h.hook()
	}
	return json.Marshal(struct{ N int }{h.N})
}

// reentryCall is a Load or Flush made from a callback on path a's writer,
// with what it must return.
type reentryCall struct {
	name  string
	call  func(s *Store, fa, fb *File[hooked]) (hooked, error)
	check func(t *testing.T, site string, got hooked, err error)
}

var reentryCalls = []reentryCall{{
	name: "Load own path",
	call: func(_ *Store, fa, _ *File[hooked]) (hooked, error) { return fa.Load(context.Background()) },
	check: func(t *testing.T, site string, got hooked, err error) {
		require.NoError(t, err)
		want := 1 // the file before the save in progress (MarshalJSON) or a failed one (OnError)
		if site == "Trace" {
			want = 2 // the save reached the disk before Trace
		}
		assert.Equal(t, want, got.N, "got the value on disk %d, want %d", got.N, want)
	},
}, {
	name: "Flush own path",
	call: func(_ *Store, fa, _ *File[hooked]) (hooked, error) {
		return hooked{}, fa.Flush(context.Background())
	},
	check: func(t *testing.T, _ string, _ hooked, err error) {
		assert.ErrorIs(t, err, errReentrant)
		var nd *NotDrainedError
		require.ErrorAs(t, err, &nd)
		assert.Equal(t, []string{osPath("/state/a.json")}, nd.Pending)
	},
}, {
	name: "Store.Flush",
	call: func(s *Store, _, _ *File[hooked]) (hooked, error) {
		return hooked{}, s.Flush(context.Background())
	},
	check: func(t *testing.T, _ string, _ hooked, err error) {
		assert.ErrorIs(t, err, errReentrant)
		var nd *NotDrainedError
		require.ErrorAs(t, err, &nd)
		assert.Equal(t, []string{osPath("/state/a.json")}, nd.Pending, "pending: only the caller's own path")
	},
}, {
	name: "Load other path",
	call: func(_ *Store, _, fb *File[hooked]) (hooked, error) { return fb.Load(context.Background()) },
	check: func(t *testing.T, _ string, got hooked, err error) {
		require.NoError(t, err)
		assert.Equal(t, 2, got.N, "Load waits for the save of b queued before it")
	},
}, {
	name: "Flush other path",
	call: func(_ *Store, _, fb *File[hooked]) (hooked, error) {
		return hooked{}, fb.Flush(context.Background())
	},
	check: func(t *testing.T, _ string, _ hooked, err error) {
		assert.NoError(t, err)
	},
}}

// A MarshalJSON, OnError or Trace running on path a's writer calls Load or
// Flush of a itself (which must neither wait for the step it is part of nor
// hang) or of b (which must work as from any goroutine, though b's save
// waits on the ready list with MaxParallel 1 and its only writer busy in
// a's step). Under synctest a regression is a reported deadlock, or a
// second of fake time passing until the stuck-writer recheck.
func TestReentrantLoadAndFlush(t *testing.T) {
	for _, site := range []string{"MarshalJSON", "OnError", "Trace"} {
		for _, rc := range reentryCalls {
			t.Run(site+"/"+rc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { runReentry(t, site, rc) })
			})
		}
	}
}

func runReentry(t *testing.T, site string, rc reentryCall) {
	var a, b = osPath("/state/a.json"), osPath("/state/b.json")
	errDisk := errors.New("disk says no")
	proceed := make(chan struct{})
	var (
		armed  atomic.Bool // the next callback at site on a's writer makes the call
		called bool        // written on the writer, read after Flush
		got    hooked
		err    error
		s      *Store
		fa, fb *File[hooked]
	)
	fire := func(at string) {
		if at == site && armed.CompareAndSwap(true, false) {
			<-proceed
			called = true
			got, err = rc.call(s, fa, fb)
		}
	}
	var failA atomic.Bool
	s = NewStore(Options{
		MaxParallel: 1,
		OnError: func(err error) {
			if errors.Is(err, errDisk) { // only a's commits fail
				fire("OnError")
			}
		},
		Trace: func(tr SaveTrace) {
			if tr.Path == a {
				fire("Trace")
			}
		},
	})
	d := newFakeDisk(s, false)
	s.hooks.commit = func(p string, data []byte, tr *SaveTrace) error {
		if p == a && failA.Load() {
			return errDisk
		}
		return d.commit(p, data, tr)
	}
	var oerr error
	fa, oerr = Open[hooked](s, a)
	require.NoError(t, oerr)
	fb, oerr = Open[hooked](s, b)
	require.NoError(t, oerr)
	require.NoError(t, fa.Save(hooked{N: 1}))
	require.NoError(t, fb.Save(hooked{N: 1}))
	require.NoError(t, s.Flush(context.Background()))
	synctest.Wait()

	failA.Store(site == "OnError")
	armed.Store(true)
	require.NoError(t, fa.Save(hooked{N: 2, hook: func() { fire("MarshalJSON") }}))
	synctest.Wait() // a's only writer waits in the callback
	require.NoError(t, fb.Save(hooked{N: 2}))
	start := time.Now()
	close(proceed)
	flushErr := s.Flush(context.Background())
	assert.Zero(t, time.Since(start), "a writer waited for itself, or for a free writer until the stuck recheck")
	require.True(t, called, "the callback at %s made the call", site)
	rc.check(t, site, got, err)
	if site == "OnError" {
		assert.ErrorIs(t, flushErr, errDisk)
	} else {
		assert.NoError(t, flushErr)
	}
	gotB, _ := d.content(b)
	assert.Equal(t, "{\"N\":2}\n", gotB)
	synctest.Wait()
	assert.Zero(t, s.runningWorkers(), "writers end with the work")
}

// Two writers whose callbacks each Load (or Flush) the other's path would
// wait for each other for good: one of the two calls returns errReentrant
// and the other completes once the first's step is over.
func TestReentrantCycle(t *testing.T) {
	calls := map[string]func(f *File[hooked]) error{
		"Load":  func(f *File[hooked]) error { _, err := f.Load(context.Background()); return err },
		"Flush": func(f *File[hooked]) error { return f.Flush(context.Background()) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewStore(Options{MaxParallel: 2})
				d := newFakeDisk(s, false)
				fa, _ := Open[hooked](s, osPath("/state/a.json"))
				fb, _ := Open[hooked](s, osPath("/state/b.json"))
				in := make(chan struct{})
				var wg sync.WaitGroup // both writers are inside their steps
				wg.Add(2)
				var errA, errB error
				fa.Save(hooked{N: 1, hook: func() { wg.Done(); <-in; errA = call(fb) }})
				fb.Save(hooked{N: 1, hook: func() { wg.Done(); <-in; errB = call(fa) }})
				wg.Wait()
				close(in)
				require.NoError(t, s.Flush(context.Background()))
				if errors.Is(errA, errReentrant) {
					assert.NoError(t, errB, "the other call completes")
				} else {
					assert.NoError(t, errA, "got %v, want errReentrant or nil", errA)
					assert.ErrorIs(t, errB, errReentrant, "one of the two calls fails")
				}
				assert.Len(t, d.log(), 2)
			})
		})
	}
}

// A Flush in an UnmarshalJSON run by a Load, with no save pending on the
// path, has nothing to wait for and succeeds.
func TestReentrantFlushNothingPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		f, _ := Open[flushingValue](s, osPath("/state/u.json"))
		d.files[osPath("/state/u.json")] = []byte("1\n")
		flushingFile = f
		defer func() { flushingFile = nil }()
		_, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.NoError(t, flushErr)
	})
}

var (
	flushingFile *File[flushingValue] // the File whose UnmarshalJSON flushes it
	flushErr     error                // what that Flush returned
)

type flushingValue struct{}

func (*flushingValue) UnmarshalJSON([]byte) error {
	flushErr = flushingFile.Flush(context.Background())
	return nil
}
