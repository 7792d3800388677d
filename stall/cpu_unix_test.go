//go:build unix

package stall_test

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU returns the CPU time this process has used, user and
// system, all threads (getrusage(2), RUSAGE_SELF).
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
