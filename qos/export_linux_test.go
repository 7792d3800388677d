//go:build linux

package qos

import "context"

// WaitApplied returns once every autogroup write this process queued after
// its children started has run or failed, or with ctx's error: a test waits
// for it before it reads a child's autogroup, and before goleak looks for
// the goroutine that writes them.
func WaitApplied(ctx context.Context) error { return autogroups.wait(ctx) }
