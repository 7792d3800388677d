//go:build !unix

package stall_test

import "time"

// processCPU returns 0: the benchmarks report the process's CPU time on
// Unix only.
func processCPU() time.Duration { return 0 }
