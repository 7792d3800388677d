package settle

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Tests on the real clock, for what synctest cannot see: goroutines blocked
// on a sync.Mutex, allocations, and the goroutines alive between fires.

// TestWaitsForRunningCallback checks that Flush, Close and Stop, called while
// the timer's callback runs, return only after it finished. It uses real
// goroutines: synctest cannot see a goroutine blocked on a sync.Mutex as
// durably blocked, so it could not wait here.
func TestWaitsForRunningCallback(t *testing.T) {
	for _, name := range []string{"Flush", "Close", "Stop"} {
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
				switch name {
				case "Flush":
					s.Flush()
				case "Close":
					s.Close()
				default:
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

// TestFlushWaitsForClose checks that a Flush called while Close runs the last
// callback returns only after it finished: Close takes the edit and runs the
// callback in one step, so no Flush can find the edit neither pending nor
// covered.
func TestFlushWaitsForClose(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	s := New(Options{Settle: time.Hour}, func() {
		close(entered)
		<-release
		finished.Store(true)
	})
	s.Mark()
	closed := make(chan bool, 1)
	go func() { closed <- s.Close() }()
	<-entered // Close is running the callback for the pending edit
	returned := make(chan bool, 1)
	go func() {
		s.Flush()
		returned <- finished.Load()
	}()
	for i := 0; i < 1000 && len(returned) == 0; i++ {
		runtime.Gosched() // time for a Flush that does not wait to return
	}
	close(release)
	assert.True(t, <-closed, "Close with an edit pending: got false, want true")
	assert.True(t, <-returned, "Flush returned while Close's callback was still running")
}
