package statefile

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The review's reproduction: a watch's fn that runs for 3 s (it could be
// in a Load on a hung disk) kept Store.Close with a 200 ms context from
// returning for 3 s. Close returns by its deadline, names the path as
// pending with the context's error, and calls fn no more; the fn's
// goroutine ends once fn returns.
func TestCloseDeadlineWithWatchFnRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		path := osPath("/state/slow.json")
		f, _ := Open[string](r.s, path)
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		calls := 0
		stop, err := f.Watch(func(string, error) {
			calls++
			entered <- struct{}{}
			<-release // the fn runs until the test releases it
		})
		require.NoError(t, err)
		r.external(path, `"theirs"`+"\n", fsnotify.Create)
		elapse(settleQuiet)
		<-entered

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- r.s.Close(ctx) }()
		elapse(200 * time.Millisecond)
		var err2 error
		select {
		case err2 = <-done:
		default:
			close(release) // so the old code fails rather than hangs
			t.Fatal("Close did not return by its deadline")
		}
		assert.Equal(t, 200*time.Millisecond, time.Since(start), "Close's time: got, want the deadline")
		var nd *NotDrainedError
		require.ErrorAs(t, err2, &nd)
		assert.Equal(t, []string{path}, nd.Pending, "pending: got, want the watched path")
		assert.True(t, errors.Is(err2, context.DeadlineExceeded), "errors.Is(%v, DeadlineExceeded)", err2)

		r.external(path, `"later"`+"\n", fsnotify.Create)
		close(release)
		elapse(2 * settleMax)
		assert.Equal(t, 1, calls, "fn calls after Close")
		stop() // the watch ended with Close: nothing to wait for
	})
}
