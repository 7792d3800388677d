package backoff

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDelay(t *testing.T) {
	b := Timer{First: time.Second, Max: 30 * time.Second}
	var got []time.Duration
	for range 8 {
		b.Failed()
		got = append(got, b.Delay())
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s}, got)
	for range 100 {
		b.Failed()
	}
	assert.Equal(t, 30*time.Second, b.Delay(), "a failure that lasts: no overflow")
	b.Succeeded()
	b.Failed()
	assert.Equal(t, time.Second, b.Delay(), "after a success, First again")
}

// A wait fires once, with the owner's lock held; one stopped or armed
// again does nothing.
func TestArmAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		b := Timer{First: 250 * time.Millisecond, Max: 30 * time.Second}
		var fired []time.Duration
		start := time.Now()
		fn := func() { fired = append(fired, time.Since(start)) }
		mu.Lock()
		b.Failed()
		b.Arm(&mu, fn)
		mu.Unlock()
		<-time.After(time.Second) // the bubble's clock
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []time.Duration{250 * time.Millisecond}, fired)
		b.Failed()
		b.Arm(&mu, fn) // 500 ms
		b.Stop()
		b.Arm(&mu, fn) // again: only this one fires
		mu.Unlock()
		<-time.After(time.Second) // the bubble's clock
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []time.Duration{250 * time.Millisecond, 1500 * time.Millisecond}, fired)
	})
}
