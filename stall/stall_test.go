package stall_test

import (
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/stall"
)

func TestSlowRead(t *testing.T) {
	r, w, path := blockingPipe(t)
	done := watch(t, stall.Options{})
	var wg sync.WaitGroup
	readAfter(t, &wg, r, w, 50*time.Millisecond)
	got := done()
	wg.Wait()

	require.Len(t, got, 1, "reports")
	rep := got[0]
	assert.Equal(t, "syscall", rep.Wait)
	assert.Equal(t, readSyscall, rep.Syscall)
	assert.GreaterOrEqual(t, rep.Duration, 45*time.Millisecond)
	assert.False(t, rep.Ongoing)
	assert.Zero(t, rep.Dropped)
	if runtime.GOOS == "linux" {
		assert.Equal(t, path, rep.Path)
	} else {
		assert.Empty(t, rep.Path, "a path is found on Linux only")
	}
	assert.True(t, inStack(rep, funcName(TestSlowRead)), "the test function in the stack:\n%v", rep)
	assert.Equal(t, funcName(readAfter), rep.Stack[0].Function, "the call site")
}

func TestMutexHeldAcrossSlowWrite(t *testing.T) {
	// A goroutine holds mu across a write into a pipe that nobody drains
	// until 50 ms after start is closed.
	r, w, err := os.Pipe()
	require.NoError(t, err)
	var (
		mu            sync.Mutex
		wg            sync.WaitGroup
		held, started = make(chan struct{}), make(chan struct{})
	)
	const size = 1 << 20
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
		close(held)
		w.Write(make([]byte, size))
	})
	wg.Go(func() {
		<-started
		drainAfter(r, size, 50*time.Millisecond)
	})
	<-held
	done := watch(t, stall.Options{})
	close(started)
	lockAndUnlock(&mu)
	got := done()
	wg.Wait()

	require.Len(t, got, 1, "reports")
	rep := got[0]
	assert.Equal(t, "sync", rep.Wait)
	assert.Empty(t, rep.Syscall)
	assert.Empty(t, rep.Path)
	assert.GreaterOrEqual(t, rep.Duration, 45*time.Millisecond)
	assert.Equal(t, funcName(lockAndUnlock), rep.Stack[0].Function, "the call site")
	assert.True(t, inStack(rep, funcName(TestMutexHeldAcrossSlowWrite)), "the test function in the stack:\n%v", rep)
}

func lockAndUnlock(mu *sync.Mutex) {
	mu.Lock()
	//lint:ignore SA2001 the wait for the lock is what stall must report
	mu.Unlock()
}

// drainAfter reads n bytes from r once d has passed.
func drainAfter(r io.Reader, n int64, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
	io.Copy(io.Discard, io.LimitReader(r, n))
}

// TestShortReadNotReported reads for 5 ms. A loaded machine can make the
// writer late, and the read then truly longer than the budget: an attempt
// counts only when the test's own clock saw the read end within half the
// budget.
func TestShortReadNotReported(t *testing.T) {
	const budget = time.Second / 60
	for attempt := 1; attempt <= 20; attempt++ {
		r, w, _ := blockingPipe(t)
		done := watch(t, stall.Options{})
		var wg sync.WaitGroup
		start := time.Now()
		readAfter(t, &wg, r, w, 5*time.Millisecond)
		took := time.Since(start)
		got := done()
		wg.Wait()
		if took < budget/2 {
			assert.Empty(t, got, "reports of a read that took %v", took)
			return
		}
		t.Logf("attempt %d: the read took %v, longer than half the budget: again", attempt, took)
	}
	t.Fatal("no read of 5 ms took less than half the budget in 20 attempts: the machine is too loaded for this test")
}

// TestOtherGoroutine: a slow read on a goroutine not watched is not
// reported. The watched goroutine spins until it is done: busy, it never
// waits.
func TestOtherGoroutine(t *testing.T) {
	r, w, _ := blockingPipe(t)
	var (
		wg   sync.WaitGroup
		read atomic.Bool
	)
	done := watch(t, stall.Options{})
	wg.Go(func() {
		readAfter(t, &wg, r, w, 50*time.Millisecond)
		read.Store(true)
	})
	for !read.Load() {
		runtime.Gosched()
	}
	got := done()
	wg.Wait()
	assert.Empty(t, got, "reports")
}

// TestRateLimit reads for 50 ms at one call site, again and again for a
// second and a half: one report in the first second, then one that
// counts those left out.
func TestRateLimit(t *testing.T) {
	r, w, _ := blockingPipe(t)
	done := watch(t, stall.Options{})
	var wg sync.WaitGroup
	reads := 0
	for start := time.Now(); time.Since(start) < 1500*time.Millisecond; reads++ {
		readAfter(t, &wg, r, w, 50*time.Millisecond)
	}
	got := done()
	wg.Wait()
	require.Len(t, got, 2, "reports of %d reads", reads)
	assert.Equal(t, got[0].Stack[0], got[1].Stack[0], "the call sites")
	assert.Zero(t, got[0].Dropped, "dropped before the first report")
	assert.Positive(t, got[1].Dropped, "dropped before the second")
	assert.Less(t, got[1].Dropped, reads-1, "dropped before the second")
	assert.GreaterOrEqual(t, got[1].Start.Sub(got[0].Start), time.Second, "between the reports")
}

// TestHang: a read that does not end is reported while it goes on, once.
func TestHang(t *testing.T) {
	r, w, path := blockingPipe(t)
	reports := make(chan stall.Report, 4)
	stops := make(chan func(), 1)
	var wg sync.WaitGroup
	wg.Go(func() { // the watched goroutine
		stop, err := stall.Watch(stall.Options{OnReport: func(r stall.Report) { reports <- r }})
		stops <- stop
		if err == nil {
			io.ReadFull(r, make([]byte, 1))
		}
	})
	stop := <-stops
	defer stop()
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	var rep stall.Report
	select {
	case rep = <-reports:
	case <-timeout.C:
		t.Fatal("no report in a minute")
	}
	w.Write([]byte{1})
	wg.Wait()
	stop()
	assert.True(t, rep.Ongoing, "ongoing")
	assert.Greater(t, rep.Duration, time.Second)
	assert.Equal(t, readSyscall, rep.Syscall)
	if runtime.GOOS == "linux" {
		assert.Equal(t, path, rep.Path)
	}
	assert.Empty(t, reports, "reports after the first")
}

// TestStopWhileWaiting: stop, called from another goroutine while the
// watched one has waited in a read for longer than the budget, reports
// that wait as going on.
func TestStopWhileWaiting(t *testing.T) {
	r, w, path := blockingPipe(t)
	reports := make(chan stall.Report, 4)
	stops := make(chan func(), 1)
	var wg sync.WaitGroup
	wg.Go(func() { // the watched goroutine
		stop, err := stall.Watch(stall.Options{OnReport: func(r stall.Report) { reports <- r }})
		stops <- stop
		if err == nil {
			io.ReadFull(r, make([]byte, 1))
		}
	})
	stop := <-stops
	defer stop()
	after := time.NewTimer(200 * time.Millisecond) // the read goes on meanwhile
	<-after.C
	stop()
	w.Write([]byte{1})
	wg.Wait()

	require.Len(t, reports, 1, "reports")
	rep := <-reports
	assert.True(t, rep.Ongoing, "ongoing")
	assert.GreaterOrEqual(t, rep.Duration, 100*time.Millisecond)
	assert.Equal(t, readSyscall, rep.Syscall)
	if runtime.GOOS == "linux" {
		assert.Equal(t, path, rep.Path)
	}
}
