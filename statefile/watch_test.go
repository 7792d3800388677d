package statefile

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Store's own saves and removes are never reported, however many; an
// external change after them is, once.
func TestWatchIgnoresOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, "/state/own.json")
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		for i := range 200 {
			f.Save(string(rune('a' + i%26)))
			if i%7 == 0 {
				require.NoError(t, f.Flush(context.Background()))
				elapse(time.Duration(i%3) * settleQuiet) // checks land between saves too
			}
			if i%50 == 0 {
				f.Remove()
			}
		}
		require.NoError(t, f.Flush(context.Background()))
		elapse(2 * settleMax)
		assert.Empty(t, c.take(), "own saves echoed")

		r.external("/state/own.json", "\"theirs\"\n", fsnotify.Create)
		elapse(settleQuiet)
		got := c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "theirs", got[0].v)
		assert.NoError(t, got[0].err)
		v, err := f.Load()
		require.NoError(t, err)
		assert.Equal(t, "theirs", v, "Load sees the external change")
		f.Save("mine")
		require.NoError(t, f.Flush(context.Background()))
		content, _ := r.d.content("/state/own.json")
		assert.Equal(t, "\"mine\"\n", content, "the next own save wins")
		elapse(settleMax)
		assert.Empty(t, c.take(), "own save after an external change echoed")
	})
}

// An external remove reports the zero value and fs.ErrNotExist; a check
// runs behind the saves queued before it, so an external write that an own
// save then replaced is not reported (last writer wins).
func TestWatchRemoveAndOrderBehindSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, "/state/rm.json")
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		f.Save("one")
		require.NoError(t, f.Flush(context.Background()))
		r.externalRemove("/state/rm.json")
		elapse(settleQuiet)
		got := c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "", got[0].v)
		assert.ErrorIs(t, got[0].err, fs.ErrNotExist)

		r.d.hold = make(chan struct{})
		f.Save("two") // stuck in its commit
		synctest.Wait()
		r.external("/state/rm.json", "\"theirs\"\n", fsnotify.Write)
		elapse(2 * settleMax)
		assert.Empty(t, c.take(), "the check did not wait for the save queued before it")
		close(r.d.hold) // "two" lands over "theirs"; the check then finds "two"
		require.NoError(t, f.Flush(context.Background()))
		elapse(settleMax)
		assert.Empty(t, c.take(), "the own save that replaced an external write was echoed")
		content, _ := r.d.content("/state/rm.json")
		assert.Equal(t, "\"two\"\n", content)
	})
}

// fn runs one call at a time off the writer: while it runs, saves go on
// and newer changes wait; only the newest is delivered after it returns.
// stop waits for a running fn, and nothing is delivered after it.
func TestWatchSlowFnSeesNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, "/state/slow.json")
		release := make(chan struct{})
		var mu sync.Mutex
		var seen []string
		stop, err := f.Watch(func(v string, err error) {
			mu.Lock()
			seen = append(seen, v)
			mu.Unlock()
			<-release
		})
		require.NoError(t, err)
		for _, v := range []string{"a", "b", "c", "d"} {
			r.external("/state/slow.json", `"`+v+"\"\n", fsnotify.Write)
			elapse(settleQuiet)
		}
		f.Save("own") // the writer is not held by the blocked fn
		require.NoError(t, f.Flush(context.Background()))
		release <- struct{}{} // "a" returns; "d" is next, "b" and "c" were replaced
		synctest.Wait()
		r.external("/state/slow.json", "\"e\"\n", fsnotify.Write)
		elapse(settleQuiet)
		stopped := make(chan struct{})
		go func() { stop(); close(stopped) }()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("stop returned while fn was running")
		default:
		}
		close(release)
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"a", "d"}, seen, "the pending \"e\" was dropped by stop")
	})
}

// The Store's watches share one notifier: a directory is added once and
// removed with its last watch, and the notifier (and its loop) ends with
// the Store's last watch. Two watches of one path both get the change.
func TestWatchSharesNotifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		a, _ := Open[string](r.s, "/state/a.json")
		b, _ := Open[string](r.s, "/state/b.json")
		o, _ := Open[string](r.s, "/other/o.json")
		ca, ca2, cb, co := newCalls(), newCalls(), newCalls(), newCalls()
		stopA, stopA2, stopB, stopO := watchT(t, a, ca), watchT(t, a, ca2), watchT(t, b, cb), watchT(t, o, co)
		dirs, closed, created := r.n.state()
		assert.Equal(t, map[string]int{"/state": 1, "/other": 1}, dirs)
		assert.Equal(t, 1, created, "notifiers")
		assert.False(t, closed)
		r.external("/state/a.json", "\"x\"\n", fsnotify.Write)
		elapse(settleQuiet)
		assert.Len(t, ca.take(), 1)
		assert.Len(t, ca2.take(), 1)
		assert.Empty(t, cb.take())
		stopO()
		stopO() // a second stop does nothing
		dirs, _, _ = r.n.state()
		assert.Equal(t, map[string]int{"/state": 1}, dirs)
		stopA()
		stopB()
		r.external("/state/a.json", "\"y\"\n", fsnotify.Write)
		elapse(settleQuiet)
		assert.Len(t, ca2.take(), 1, "the remaining watch of the path")
		assert.Empty(t, ca.take(), "a stopped watch")
		stopA2()
		_, closed, _ = r.n.state()
		assert.True(t, closed, "the notifier closed with the last watch")
		stop := watchT(t, b, cb) // a new watch makes a new notifier
		_, _, created = r.n.state()
		assert.Equal(t, 2, created)
		stop()
	})
}

// A notifier error (an inotify queue overflow) checks every watched path:
// the changed one is reported, the unchanged one is not.
func TestWatchOverflowChecksAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		a, _ := Open[string](r.s, "/state/a.json")
		b, _ := Open[string](r.s, "/state/b.json")
		b.Save("mine")
		require.NoError(t, b.Flush(context.Background()))
		ca, cb := newCalls(), newCalls()
		defer watchT(t, a, ca)()
		defer watchT(t, b, cb)()
		r.external("/state/a.json", "\"lost\"\n") // its event was lost
		r.n.fail(fsnotify.ErrEventOverflow)
		elapse(settleQuiet)
		got := ca.take()
		require.Len(t, got, 1)
		assert.Equal(t, "lost", got[0].v)
		assert.Empty(t, cb.take(), "unchanged file reported")
	})
}

// Close stops every watch; Watch after Close returns ErrClosed.
func TestWatchEndsAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, "/state/c.json")
		c := newCalls()
		stop := watchT(t, f, c)
		require.NoError(t, r.s.Close(context.Background()))
		_, closed, _ := r.n.state()
		assert.True(t, closed)
		stop() // after Close: nothing left to do
		_, err := f.Watch(c.fn)
		assert.ErrorIs(t, err, ErrClosed)
		assert.Panics(t, func() { f.Watch(nil) })
	})
}

// A notifier that cannot be made, or a directory that cannot be watched,
// is Watch's error, with the path.
func TestWatchSetupErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, "/state/e.json")
		errNo := errors.New("too many open files")
		r.s.newNotifier = func() (notifier, error) { return nil, errNo }
		_, err := f.Watch(newCalls().fn)
		assert.ErrorIs(t, err, errNo)
		assert.ErrorContains(t, err, "/state/e.json")
	})
}
