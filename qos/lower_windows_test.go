//go:build windows

package qos

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLowerWindowsRestores checks that each lowering puts back the thread
// priority read before it. Not run in this repository's CI (Linux only, and
// Go's Windows binaries do not run under Wine there): compile-only there.
func TestLowerWindowsRestores(t *testing.T) {
	tests := []struct {
		name  string
		lower lowerFunc
	}{
		{"below normal", lowerBelowNormal},
		{"background mode", lowerBackground},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			go func() { // a goroutine of its own: a thread left locked is retired
				defer close(done)
				runtime.LockOSThread()
				// Not the test's goroutine: assert only, no require.
				before, err := threadPriority()
				if !assert.NoError(t, err) {
					return // locked: the thread is retired
				}
				restore, err := tt.lower()
				if !assert.NoError(t, err) || !assert.NotNil(t, restore, "restore") {
					return
				}
				if !assert.NoError(t, restore(), "restore") {
					return
				}
				after, err := threadPriority()
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, before, after, "thread priority after restore: got %d, want %d", after, before)
				runtime.UnlockOSThread()
			}()
			<-done
		})
	}
}
