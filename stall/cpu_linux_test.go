package stall_test

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU returns the CPU time, user and system, this process has used
// (all its threads); threadCPU that of the calling thread (getrusage(2),
// RUSAGE_SELF and RUSAGE_THREAD).
func processCPU() time.Duration { return rusage(unix.RUSAGE_SELF) }

func threadCPU() time.Duration { return rusage(unix.RUSAGE_THREAD) }

func rusage(who int) time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
