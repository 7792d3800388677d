//go:build !linux

package qos

import "context"

// waitApplied has nothing to wait for: only Linux queues steps after start.
func waitApplied(context.Context) error { return nil }
