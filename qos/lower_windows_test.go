//go:build windows

package qos

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/offmain/offmain/internal/wine"
)

// wineNoBackgroundMode is why background processing mode cannot be tested
// under Wine.
const wineNoBackgroundMode = "Wine refuses SetThreadPriority(THREAD_MODE_BACKGROUND_BEGIN) with ERROR_INVALID_PARAMETER"

// unknown stands for a thread priority the test does not check.
const unknown int32 = threadPriorityErrorReturn

// onLockedThread runs fn on a goroutine locked to its own thread and
// waits. fn reports with assert only (not the test's goroutine), and
// returns whether the thread is as it came, so that it goes back to the
// pool (a thread left locked is retired).
func onLockedThread(fn func() bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if fn() {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

// Each lowering sets the thread priority qos asks Windows for, and its
// restore puts back the priority read before.
func TestLowerWindowsRestores(t *testing.T) {
	tests := []struct {
		name    string
		lower   lowerFunc
		want    int32 // GetThreadPriority while lowered; unread if unknown
		skipWhy string
	}{
		{"below normal", lowerBelowNormal, threadPriorityBelowNormal, ""},
		// What GetThreadPriority reads in background mode is not
		// documented; the restore is.
		{"background mode", lowerBackground, unknown, wineNoBackgroundMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skipWhy != "" {
				wine.Skip(t, tt.skipWhy)
			}
			onLockedThread(func() bool {
				before, err := threadPriority()
				if !assert.NoError(t, err) {
					return false
				}
				restore, err := tt.lower()
				if !assert.NoError(t, err) || !assert.NotNil(t, restore, "restore") {
					return false
				}
				if during, err := threadPriority(); tt.want != unknown && assert.NoError(t, err) {
					assert.Equal(t, tt.want, during, "thread priority while lowered: got %d, want %d", during, tt.want)
				}
				if !assert.NoError(t, restore(), "restore") {
					return false
				}
				after, err := threadPriority()
				if !assert.NoError(t, err) {
					return false
				}
				return assert.Equal(t, before, after, "thread priority after restore: got %d, want %d", after, before)
			})
		})
	}
}

// Do runs fn on a thread at the tier's priority and leaves the calling
// thread as it was.
func TestDoWindows(t *testing.T) {
	tests := []struct {
		name    string
		tier    Tier
		mode    Mode
		want    int32 // GetThreadPriority in fn
		skipWhy string
	}{
		{"agent utility", Agent, ModeUtility, threadPriorityBelowNormal, ""},
		{"mode off", Background, ModeOff, 0, ""},
		{"background tier", Background, ModeUtility, unknown, wineNoBackgroundMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skipWhy != "" {
				wine.Skip(t, tt.skipWhy)
			}
			onLockedThread(func() bool {
				before, err := threadPriority()
				if !assert.NoError(t, err) {
					return false
				}
				in := unknown
				err = Do(tt.tier, tt.mode, func() { in, _ = threadPriority() })
				assert.NoError(t, err)
				if tt.want != unknown {
					assert.Equal(t, tt.want, in, "thread priority in fn: got %d, want %d", in, tt.want)
				}
				after, err := threadPriority()
				return assert.NoError(t, err) && assert.Equal(t, before, after, "the caller's thread priority: got %d, want %d", after, before)
			})
		})
	}
}
