package fakefile

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOpsAndFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &File[map[string]int]{Start: time.Now()}
		v := map[string]int{"a": 1}
		require.NoError(t, f.Save(v))
		tm := time.NewTimer(time.Second) // on the bubble's clock: no real time passes
		<-tm.C
		require.NoError(t, f.Flush(t.Context()))
		errFull := errors.New("no space left on device")
		f.SetSaveErr(errFull)
		assert.ErrorIs(t, f.Remove(), errFull)
		require.NoError(t, f.Flush(t.Context()))

		ops := f.Ops()
		require.Len(t, ops, 2)
		assert.Equal(t, Op[map[string]int]{Value: v}, ops[0])
		assert.Equal(t, Op[map[string]int]{At: time.Second, Remove: true}, ops[1])
		v["a"] = 2
		assert.Equal(t, 2, f.Ops()[0].Value["a"], "the op keeps the very map Save was handed: got, want")
		assert.Equal(t, []int{1, 2}, f.Flushes(), "ops queued at each Flush: got, want")
	})
}

func TestLoadGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &File[int]{LoadValue: 7, Gate: make(chan struct{})}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := f.Load(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "a gated load whose context ends")

		got := make(chan int, 1)
		go func() {
			v, _ := f.Load(context.Background())
			got <- v
		}()
		synctest.Wait()
		assert.Empty(t, got, "Load returned before the gate opened")
		close(f.Gate)
		assert.Equal(t, 7, <-got)
		assert.Equal(t, 2, f.Loads())
	})
}

func TestWatch(t *testing.T) {
	f := &File[int]{}
	var got []int
	stop, err := f.Watch(func(v int, err error) { got = append(got, v) })
	require.NoError(t, err)
	f.Deliver(t, 3, nil)
	stop()
	assert.Equal(t, []int{3}, got)
	assert.Equal(t, 1, f.Watches())
	assert.Equal(t, 1, f.Stops())

	errNo := errors.New("too many open files")
	f = &File[int]{WatchErr: errNo}
	_, err = f.Watch(func(int, error) {})
	assert.ErrorIs(t, err, errNo)
	assert.Equal(t, 1, f.Watches())
}
