package settle

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Tests on the real clock, for what synctest cannot see: goroutines blocked
// on a sync.Mutex, allocations, and the goroutines alive between fires.

// TestWaitsForRunningCallback checks that Flush and Stop, called while the
// timer's callback runs, return only after it finished. It uses real
// goroutines: synctest cannot see a goroutine blocked on a sync.Mutex as
// durably blocked, so it could not wait here.
func TestWaitsForRunningCallback(t *testing.T) {
	for _, name := range []string{"Flush", "Stop"} {
		t.Run(name, func(t *testing.T) {
			entered := make(chan struct{})
			release := make(chan struct{})
			var calls atomic.Int32
			var finished atomic.Bool
			s := New(Options{Settle: time.Nanosecond}, func() {
				if calls.Add(1) > 1 {
					return
				}
				close(entered)
				<-release
				finished.Store(true)
			})
			defer s.Stop()
			s.Mark()
			<-entered // the timer's callback is running and holds on release
			s.Mark()  // a second edit, pending while the first callback runs
			returned := make(chan bool, 1)
			go func() {
				if name == "Flush" {
					s.Flush()
				} else {
					s.Stop()
				}
				returned <- finished.Load()
			}()
			close(release)
			assert.True(t, <-returned, "%s returned while the callback was still running", name)
		})
	}
}

func TestMarkDoesNotAllocate(t *testing.T) {
	s := New(Options{Settle: time.Hour, MaxWait: time.Hour}, func() {})
	defer s.Stop()
	s.Mark() // the first Mark creates the timer
	allocs := testing.AllocsPerRun(1000, s.Mark)
	assert.Zero(t, allocs, "allocations per Mark: got %v, want 0", allocs)
}

// TestNoIdleGoroutine checks that a Scheduler runs no goroutine while it
// waits for edits to settle, nor after it fired.
func TestNoIdleGoroutine(t *testing.T) {
	fired := make(chan struct{}, 1)
	s := New(Options{Settle: time.Hour}, func() { fired <- struct{}{} })
	defer s.Stop()
	s.Mark()
	goleak.VerifyNone(t) // waiting: only a runtime timer, no goroutine
	require.True(t, s.Flush())
	<-fired
	goleak.VerifyNone(t)
}
