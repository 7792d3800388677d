//go:build linux

package qos

import (
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkLockBehindLoweredHolder measures the priority inversion a
// demoted pass holding a lock creates: how long a goroutine at normal
// priority (the GUI's) waits in Lock for a mutex that a pass run by Do
// holds with 1 ms of CPU work left to do under it, with 2×NumCPU busy loops at nice 0
// in the same session (and so the same autogroup) as the benchmark. Mode
// off is the holder at normal priority; utility lowers it to nice 19,
// background to SCHED_IDLE. A SCHED_IDLE thread weighs 3 against a nice-0
// thread's 1024 (kernel/sched/core.c, sched_prio_to_weight and
// WEIGHT_IDLEPRIO), so it runs its critical section only in the crumbs the
// busy loops leave, and the GUI waits that long.
//
//	go test -run '^$' -bench LockBehindLoweredHolder -benchtime 20x ./qos/
func BenchmarkLockBehindLoweredHolder(b *testing.B) {
	for range 2 * runtime.NumCPU() {
		spin := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
	}
	for _, m := range []Mode{ModeOff, ModeUtility, ModeBackground} {
		b.Run(string(m), func(b *testing.B) {
			var waits []time.Duration
			for b.Loop() {
				waits = append(waits, lockWaitBehind(b, m, time.Millisecond))
			}
			reportPercentiles(b, waits)
		})
	}
}

// lockWaitBehind returns how long Lock waits for a mutex that a pass run
// by Do in mode m holds, with work of CPU time left to do under it when
// Lock is called.
func lockWaitBehind(b *testing.B, m Mode, work time.Duration) time.Duration {
	var (
		mu      sync.Mutex
		wanting atomic.Bool // the GUI side is about to call Lock
	)
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Do(Background, m, func() {
			mu.Lock()
			close(held)
			for !wanting.Load() {
			}
			burnCPU(work)
			mu.Unlock()
		})
	}()
	<-held
	wanting.Store(true)
	t0 := time.Now()
	mu.Lock()
	wait := time.Since(t0)
	mu.Unlock()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return wait
}

// burnCPU spins until the calling thread has run for d
// (clock_gettime(2), CLOCK_THREAD_CPUTIME_ID), however long that takes.
func burnCPU(d time.Duration) {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	end := ts.Nano() + d.Nanoseconds()
	for ts.Nano() < end {
		_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	}
}
