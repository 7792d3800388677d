//go:build darwin

package qos

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// darwinThreadState is what lowerThread may change on the calling thread.
type darwinThreadState struct {
	Class, Relpri, IOPolicy, DarwinBG int
}

// readDarwinThread reads it; on an error it reports it and returns false.
// It runs on a goroutine other than the test's, so it cannot use require.
func readDarwinThread(t *testing.T, s *darwinThreadState) bool {
	t.Helper()
	s.Class, s.Relpri = qosClassSelf()
	var err error
	s.IOPolicy, err = getIOPolicy(iopolScopeThread)
	if !assert.NoError(t, err) {
		return false
	}
	s.DarwinBG, err = unix.Getpriority(prioDarwinThread, 0)
	return assert.NoError(t, err)
}

// TestLowerThreadRestores checks that each tier's restore puts back the
// state read before lowering, and that a nil restore comes only where xnu
// strips the QoS class (Serving on a thread with one). Not run in this
// repository's CI (Linux only): compile-only there.
func TestLowerThreadRestores(t *testing.T) {
	tests := []struct {
		name string
		tier Tier
		mode Mode
	}{
		{"agent utility", Agent, ModeUtility},
		{"agent background", Agent, ModeBackground},
		{"background", Background, ModeUtility},
		{"serving", Serving, ModeUtility},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			go func() { // a goroutine of its own: a thread with no restore is retired
				defer close(done)
				runtime.LockOSThread()
				var before, lowered, after darwinThreadState
				if !readDarwinThread(t, &before) {
					return // locked: the thread is retired
				}
				restore, err := lowerThread(tt.tier, tt.mode)
				if !assert.NoError(t, err, "lowerThread") || !readDarwinThread(t, &lowered) {
					return
				}
				assert.NotEqual(t, before, lowered, "state: got %+v lowered, want a change", lowered)
				if restore == nil {
					assert.True(t, tt.tier == Serving && before.Class != qosClassUnspecified,
						"nil restore for %v with state %+v", tt.tier, before)
					return
				}
				if !assert.NoError(t, restore(), "restore") || !readDarwinThread(t, &after) {
					return
				}
				assert.Equal(t, before, after, "state after restore: got %+v, want %+v", after, before)
				runtime.UnlockOSThread()
			}()
			<-done
		})
	}
}
