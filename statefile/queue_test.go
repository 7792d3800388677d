package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Point 1: Save neither encodes nor waits, even while the path's writer is
// stuck in a commit that does not finish.
func TestSaveReturnsWhileWriterStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, err := Open[countingValue](s, osPath("/state/a.json"))
		require.NoError(t, err)
		var encodes atomic.Int32
		require.NoError(t, f.Save(countingValue{N: 1, encodes: &encodes}))
		synctest.Wait() // the writer is now inside the held commit
		require.Equal(t, int32(1), encodes.Load(), "the first save was encoded on the writer")
		start := time.Now()
		for i := 2; i <= 1000; i++ {
			require.NoError(t, f.Save(countingValue{N: i, encodes: &encodes}))
		}
		assert.Equal(t, time.Duration(0), time.Since(start), "Save waited for something")
		assert.Equal(t, int32(1), encodes.Load(), "Save encoded on the caller")
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
		assert.Equal(t, []string{osPath("/state/a.json") + "={\"N\":1}", osPath("/state/a.json") + "={\"N\":1000}"}, d.log())
	})
}

// countingValue counts its encodings.
type countingValue struct {
	N       int
	encodes *atomic.Int32
}

func (v countingValue) MarshalJSON() ([]byte, error) {
	v.encodes.Add(1)
	return json.Marshal(struct{ N int }{v.N})
}

// Point 1 and 12: with the writer stuck and tracing off, Save allocates
// nothing (the value is held in a typed slot, not boxed).
func TestSaveAllocatesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, err := Open[[]byte](s, osPath("/state/alloc.json"))
		require.NoError(t, err)
		v := make([]byte, 64<<10)
		require.NoError(t, f.Save(v))
		synctest.Wait()
		allocs := testing.AllocsPerRun(1000, func() { f.Save(v) })
		assert.Zero(t, allocs, "allocs per Save")
		assert.True(t, f.q.queuedAt.IsZero(), "tracing off, yet Save read the clock")
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
	})
}

// Point 2: saves run in call order; queued saves replaced before they ran
// are skipped and counted; the file ends as the last save left it.
func TestSavesCoalesceInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var traces []SaveTrace
		var mu sync.Mutex
		s := NewStore(Options{Trace: func(tr SaveTrace) { mu.Lock(); traces = append(traces, tr); mu.Unlock() }})
		d := newFakeDisk(s, true)
		f, err := Open[int](s, osPath("/state/n.json"))
		require.NoError(t, err)
		f.Save(1)
		synctest.Wait()
		for i := 2; i <= 5; i++ {
			f.Save(i)
		}
		d.hold <- struct{}{} // 1 commits; 5 starts and waits
		synctest.Wait()
		f.Save(6)
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
		assert.Equal(t, []string{osPath("/state/n.json") + "=1", osPath("/state/n.json") + "=5", osPath("/state/n.json") + "=6"}, d.log())
		got, _ := d.content(osPath("/state/n.json"))
		assert.Equal(t, "6\n", got)
		require.Len(t, traces, 3)
		assert.Equal(t, []int{0, 3, 0}, []int{traces[0].Superseded, traces[1].Superseded, traces[2].Superseded})
	})
}

// Point 4: Remove is queued like a save, replaces a pending save, and a
// missing file is not an error.
func TestRemoveIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, false)
		f, err := Open[string](s, osPath("/state/r.json"))
		require.NoError(t, err)
		require.NoError(t, f.Remove()) // nothing there yet
		require.NoError(t, f.Flush(context.Background()))
		f.Save("a")
		f.Remove()
		f.Save("b")
		f.Remove()
		require.NoError(t, f.Flush(context.Background()))
		_, ok := d.content(osPath("/state/r.json"))
		assert.False(t, ok, "file still there after Remove")
		assert.Equal(t, osPath("/state/r.json")+" removed", d.log()[len(d.log())-1])
	})
}

// Point 5: an encode error leaves the file as the last good save left it,
// goes to OnError, is returned by the next Flush, and the next save works.
func TestEncodeErrorKeepsFileAndIsReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"NaN", math.NaN()},
		{"MarshalJSON fails", failingMarshal{}},
		{"unsupported type", make(chan int)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reported []error
				s := NewStore(Options{OnError: func(err error) { reported = append(reported, err) }})
				d := newFakeDisk(s, false)
				f, err := Open[any](s, osPath("/state/e.json"))
				require.NoError(t, err)
				f.Save("good")
				require.NoError(t, f.Flush(context.Background()))
				f.Save(tc.v)
				err = f.Flush(context.Background())
				var nd *NotDrainedError
				require.ErrorAs(t, err, &nd)
				assert.Empty(t, nd.Pending)
				assert.Contains(t, nd.Failed, osPath("/state/e.json"))
				assert.Len(t, reported, 1)
				got, _ := d.content(osPath("/state/e.json"))
				assert.Equal(t, "\"good\"\n", got)
				f.Save("next")
				assert.NoError(t, f.Flush(context.Background()), "the failure was reported once")
				got, _ = d.content(osPath("/state/e.json"))
				assert.Equal(t, "\"next\"\n", got)
			})
		})
	}
}

type failingMarshal struct{}

var errMarshal = errors.New("cannot marshal")

func (failingMarshal) MarshalJSON() ([]byte, error) { return nil, errMarshal }

// Point 5: errors.As and errors.Is reach the failed save's own error.
func TestFlushErrorUnwrapsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		newFakeDisk(s, false)
		f, _ := Open[failingMarshal](s, osPath("/state/m.json"))
		f.Save(failingMarshal{})
		err := s.Flush(context.Background())
		assert.ErrorIs(t, err, errMarshal)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.EqualError(t, err, "statefile: not drained: failed "+osPath("/state/m.json")+": encode: json: error calling MarshalJSON for type statefile.failingMarshal: cannot marshal")
	})
}

// Point 6: Load waits for the saves queued before it, and a stream of new
// saves does not starve it.
func TestLoadWaitsForQueuedSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, _ := Open[int](s, osPath("/state/l.json"))
		f.Save(1)
		synctest.Wait()
		f.Save(2)
		got := make(chan int, 1)
		go func() { v, _ := f.Load(context.Background()); got <- v }()
		synctest.Wait()
		f.Save(3) // queued after the Load: the Load must not wait for it... but may see it
		select {
		case <-got:
			t.Fatal("Load returned before the save queued before it")
		default:
		}
		d.hold <- struct{}{} // commit 1
		d.hold <- struct{}{} // commit 3 (it superseded 2, which was queued before the Load)
		v := <-got
		assert.Equal(t, 3, v)
		// A stream of saves: each Load still returns.
		close(d.hold)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					f.Save(i)
					runtime.Gosched()
				}
			}
		})
		for range 100 {
			_, err := f.Load(context.Background())
			require.NoError(t, err)
		}
		close(stop)
		wg.Wait()
		require.NoError(t, f.Flush(context.Background()))
	})
}

// Point 6: a save queued after a Load never runs before it, so saves that
// keep arriving cannot starve the Load, and it sees the value queued
// before it rather than a newer one.
func TestLoadRunsBeforeLaterSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		d := newFakeDisk(s, true)
		f, _ := Open[int](s, osPath("/state/order.json"))
		f.Save(1)
		synctest.Wait() // the writer is inside commit 1
		got := make(chan int, 1)
		go func() { v, _ := f.Load(context.Background()); got <- v }()
		synctest.Wait()
		f.Save(2)            // queued after the Load
		d.hold <- struct{}{} // commit 1 ends; commit 2 would block
		synctest.Wait()
		select {
		case v := <-got:
			assert.Equal(t, 1, v, "Load saw a save queued after it")
		default:
			t.Fatal("Load waits behind a save queued after it")
		}
		close(d.hold)
		require.NoError(t, f.Flush(context.Background()))
	})
}

// Point 6: no file means the zero value and fs.ErrNotExist.
func TestLoadMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		newFakeDisk(s, false)
		f, _ := Open[map[string]int](s, osPath("/state/none.json"))
		v, err := f.Load(context.Background())
		assert.Nil(t, v)
		assert.ErrorIs(t, err, errNotExist)
	})
}

// Point 7: two Opens of one path share a queue; different paths run in
// parallel, at most MaxParallel at once.
func TestOpenSharesQueueAndParallelIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 3})
		d := newFakeDisk(s, true)
		a, _ := Open[int](s, osPath("/state/x/../same.json"))
		b, _ := Open[int](s, osPath("/state/same.json"))
		require.Same(t, a.q, b.q)
		_, err := Open[string](s, osPath("/state/same.json"))
		assert.ErrorContains(t, err, "already open with type int")
		for i := range 10 {
			f, _ := Open[int](s, osPath(fmt.Sprintf("/state/p%d.json", i)))
			f.Save(i)
		}
		a.Save(1)
		b.Save(2)
		synctest.Wait()
		assert.Equal(t, 3, s.steps(), "steps at once")
		close(d.hold)
		require.NoError(t, s.Flush(context.Background()))
		assert.Equal(t, 3, d.maxRun, "commits at once")
		got, _ := d.content(osPath("/state/same.json"))
		assert.Equal(t, "2\n", got)
	})
}

// Point 9: with nothing queued the Store runs no goroutine.
func TestNoIdleGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		newFakeDisk(s, false)
		for i := range 20 {
			f, _ := Open[int](s, osPath(fmt.Sprintf("/state/g%d.json", i)))
			f.Save(i)
		}
		require.NoError(t, s.Flush(context.Background()))
		synctest.Wait()
		assert.Zero(t, s.runningWorkers())
	})
}

// A writer inside one disk step for stuckAfter stops counting against
// MaxParallel: with MaxParallel 1 and one path hung, another path's save
// lands and its Load answers once the first writer counts as stuck, instead
// of waiting behind the hang for good. However many paths hang, the others
// still land: each hung path holds a writer of its own and no token.
func TestStuckWriterDoesNotBlockOtherPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 1})
		d := newFakeDisk(s, false)
		d.holds = make(map[string]chan struct{})
		for _, p := range []string{osPath("/state/hung1.json"), osPath("/state/hung2.json"), osPath("/state/hung3.json")} {
			d.holds[p] = make(chan struct{})
		}
		hung1, _ := Open[int](s, osPath("/state/hung1.json"))
		hung1.Save(1)
		synctest.Wait()
		ok, _ := Open[int](s, osPath("/state/ok.json"))
		start := time.Now()
		ok.Save(7)
		require.NoError(t, ok.Flush(context.Background()))
		assert.Equal(t, stuckAfter, time.Since(start), "the other path's save waits until the hung writer counts as stuck, no longer")
		v, err := ok.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 7, v)

		for _, p := range []string{osPath("/state/hung2.json"), osPath("/state/hung3.json")} {
			f, _ := Open[int](s, p)
			f.Save(1)
		}
		elapse(10 * stuckAfter)
		assert.Equal(t, 3, s.runningWorkers(), "writers: one per hung path")
		assert.Zero(t, s.steps(), "tokens held by hung steps")
		ok.Save(8)
		start = time.Now()
		require.NoError(t, ok.Flush(context.Background()), "three paths hang, with MaxParallel 1")
		assert.Zero(t, time.Since(start), "a save with every hung step's token given back")

		for _, h := range d.holds {
			close(h)
		}
		require.NoError(t, s.Flush(context.Background()))
		got, _ := d.content(osPath("/state/ok.json"))
		assert.Equal(t, "8\n", got)
		synctest.Wait()
		assert.Zero(t, s.runningWorkers(), "the extra writers end with the work")
	})
}

// Two Saves back to back on an idle Store, the first to a path that hangs:
// the second is scheduled while the first's worker has started but not yet
// begun its step, and must still get a writer once that one is stuck.
func TestStuckWriterBackToBackSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 1})
		d := newFakeDisk(s, false)
		d.holds = map[string]chan struct{}{osPath("/state/hung.json"): make(chan struct{})}
		hung, _ := Open[int](s, osPath("/state/hung.json"))
		ok, _ := Open[int](s, osPath("/state/ok.json"))
		elapse(stuckAfter) // past the recheck the Opens' sweeps may have armed
		hung.Save(1)
		ok.Save(7)
		ctx, cancel := context.WithTimeout(context.Background(), 10*stuckAfter)
		defer cancel()
		err := ok.Flush(ctx)
		close(d.holds[osPath("/state/hung.json")])
		require.NoError(t, err, "a path stranded behind a hung writer with room for another")
		require.NoError(t, s.Flush(context.Background()))
	})
}

// When the recheck finds room for several writers (MaxParallel 2, two
// stuck), it starts one per queued path, not one in all: here the first it
// starts hangs too, and the other path must not wait for it.
func TestStuckWritersRecheckStartsEach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 2})
		d := newFakeDisk(s, false)
		d.holds = map[string]chan struct{}{}
		var fs []*File[int]
		for i, p := range []string{osPath("/state/h1.json"), osPath("/state/h2.json"), osPath("/state/h3.json"), osPath("/state/ok.json")} {
			if i < 3 {
				d.holds[p] = make(chan struct{})
			}
			f, _ := Open[int](s, p)
			fs = append(fs, f)
		}
		elapse(stuckAfter) // past the recheck the Opens' sweeps may have armed
		fs[0].Save(1)
		fs[1].Save(1)
		synctest.Wait() // both writers inside a hung step
		fs[2].Save(1)
		fs[3].Save(7)
		ctx, cancel := context.WithTimeout(context.Background(), 10*stuckAfter)
		defer cancel()
		err := fs[3].Flush(ctx)
		synctest.Wait()
		assert.Equal(t, 3, s.runningWorkers(), "the three stuck; the one that wrote ok.json ended")
		for _, h := range d.holds {
			close(h)
		}
		require.NoError(t, err, "a path stranded with 3 writers of the 4 allowed")
		require.NoError(t, s.Flush(context.Background()))
	})
}

// Once the stuck writer comes back, the extra one ends after its step:
// MaxParallel 1 means one commit at a time again, not two for as long as
// the load lasts.
func TestStuckWriterSurplusRetires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 1})
		d := newFakeDisk(s, false)
		d.holds = map[string]chan struct{}{}
		var fs []*File[int]
		for _, p := range []string{osPath("/state/a.json"), osPath("/state/b.json"), osPath("/state/c.json")} {
			d.holds[p] = make(chan struct{})
			f, _ := Open[int](s, p)
			fs = append(fs, f)
		}
		elapse(stuckAfter) // past the recheck the Opens' sweeps may have armed
		fs[0].Save(1)
		synctest.Wait() // the writer hangs in a's commit
		fs[1].Save(1)
		fs[2].Save(1)
		elapse(stuckAfter)                      // an extra writer takes b and hangs too
		close(d.holds[osPath("/state/a.json")]) // the first comes back
		synctest.Wait()
		d.mu.Lock()
		running := d.running
		d.mu.Unlock()
		assert.Equal(t, 1, running, "commits at once once no writer is stuck (MaxParallel 1)")
		close(d.holds[osPath("/state/b.json")])
		close(d.holds[osPath("/state/c.json")])
		require.NoError(t, s.Flush(context.Background()))
		synctest.Wait()
		assert.Zero(t, s.runningWorkers())
	})
}

// A writer that retires (beyond the limit, the stuck one back) leaves its
// path on the ready list; that path must not wait there for good while the
// remaining writer hangs. MaxParallel 1: x hangs, y's writer starts at the
// recheck and hangs in y, x's writer comes back and retires, then x is
// saved again.
func TestStuckWriterRetireStrandsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 1})
		d := newFakeDisk(s, false)
		d.holds = map[string]chan struct{}{
			osPath("/state/x.json"): make(chan struct{}),
			osPath("/state/y.json"): make(chan struct{}),
		}
		x, _ := Open[int](s, osPath("/state/x.json"))
		y, _ := Open[int](s, osPath("/state/y.json"))
		elapse(stuckAfter) // past the recheck the Opens' sweeps may have armed
		x.Save(1)
		synctest.Wait()
		y.Save(1)
		elapse(stuckAfter) // a second writer takes y and hangs
		close(d.holds[osPath("/state/x.json")])
		synctest.Wait()
		x.Save(2)
		ctx, cancel := context.WithTimeout(context.Background(), 10*stuckAfter)
		defer cancel()
		err := x.Flush(ctx)
		close(d.holds[osPath("/state/y.json")])
		require.NoError(t, err, "x stranded on the ready list behind y's hung writer")
		require.NoError(t, s.Flush(context.Background()))
	})
}
