//go:build !linux

package stall_test

import "time"

// processCPU and threadCPU return 0: the benchmarks report CPU times on
// Linux only.
func processCPU() time.Duration { return 0 }

func threadCPU() time.Duration { return 0 }
