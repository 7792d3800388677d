package main

import (
	"syscall"
	"time"
)

// sleepLate sleeps d in the kernel on the calling thread (nanosleep(2):
// the thread blocks, unlike time.Sleep, which parks the goroutine on the
// runtime's timers) and returns how much later than d it woke.
func sleepLate(d time.Duration) (time.Duration, bool) {
	ts := syscall.NsecToTimespec(int64(d))
	t := time.Now()
	if err := syscall.Nanosleep(&ts, nil); err != nil {
		return 0, false
	}
	return time.Since(t) - d, true
}
