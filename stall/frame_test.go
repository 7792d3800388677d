package stall_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/stall"
)

// selectLoop is an event loop like Fyne's runGL: it waits in a select for
// the next queued function, and runs it inside a Frame mark if marks.
func selectLoop(queue <-chan func(), quit <-chan struct{}, marks bool) {
	for {
		select {
		case f := <-queue:
			if marks {
				end := stall.Frame()
				f()
				end()
			} else {
				f()
			}
		case <-quit:
			return
		}
	}
}

// feed sends queue one function 60 ms from now, and closes quit 60 ms
// after that: the loop idles twice for 60 ms.
func feed(queue chan<- func(), quit chan<- struct{}) {
	t := time.NewTimer(60 * time.Millisecond)
	defer t.Stop()
	<-t.C
	queue <- func() {}
	t.Reset(60 * time.Millisecond)
	<-t.C
	close(quit)
}

func TestIdleSelectLoop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     stall.Options
		marks    bool
		reported bool
	}{
		{name: "recognised by Options.Idle", opts: stall.Options{Idle: []string{funcName(selectLoop)}}},
		{name: "outside Frame marks", marks: true},
		{name: "neither: the idle wait is reported", reported: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			queue, quit := make(chan func()), make(chan struct{})
			var wg sync.WaitGroup
			done := watch(t, tc.opts)
			wg.Go(func() { feed(queue, quit) })
			selectLoop(queue, quit, tc.marks)
			got := done()
			wg.Wait()
			if !tc.reported {
				assert.Empty(t, got, "reports")
				return
			}
			require.NotEmpty(t, got, "reports")
			assert.Equal(t, "select", got[0].Wait)
			assert.Equal(t, funcName(selectLoop), got[0].Stack[0].Function, "the call site")
		})
	}
}

// TestFrameWaitReported: a slow read inside a Frame mark is reported,
// marks or not.
func TestFrameWaitReported(t *testing.T) {
	r, w, _ := blockingPipe(t)
	done := watch(t, stall.Options{})
	var wg sync.WaitGroup
	end := stall.Frame()
	readAfter(t, &wg, r, w, 50*time.Millisecond)
	end()
	got := done()
	wg.Wait()
	require.Len(t, got, 1, "reports")
	assert.Equal(t, readSyscall, got[0].Syscall)
}

// TestBusyFrame: a frame busy on the CPU for 50 ms waits for nothing.
func TestBusyFrame(t *testing.T) {
	for _, marks := range []bool{false, true} {
		done := watch(t, stall.Options{})
		end := func() {}
		if marks {
			end = stall.Frame()
		}
		spin(50 * time.Millisecond)
		end()
		assert.Empty(t, done(), "reports, with marks: %v", marks)
	}
}

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
