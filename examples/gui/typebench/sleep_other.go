//go:build !linux

package main

import "time"

// sleepLate is measured on Linux only, where typebench runs (Xvfb, /proc).
func sleepLate(time.Duration) (time.Duration, bool) { return 0, false }
