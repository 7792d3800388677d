package statefile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"syscall"
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
		f, _ := Open[string](r.s, osPath("/state/own.json"))
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

		r.external(osPath("/state/own.json"), "\"theirs\"\n", fsnotify.Create)
		elapse(settleQuiet)
		got := c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "theirs", got[0].v)
		assert.NoError(t, got[0].err)
		v, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "theirs", v, "Load sees the external change")
		f.Save("mine")
		require.NoError(t, f.Flush(context.Background()))
		content, _ := r.d.content(osPath("/state/own.json"))
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
		f, _ := Open[string](r.s, osPath("/state/rm.json"))
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		f.Save("one")
		require.NoError(t, f.Flush(context.Background()))
		r.externalRemove(osPath("/state/rm.json"))
		elapse(settleQuiet)
		got := c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "", got[0].v)
		assert.ErrorIs(t, got[0].err, fs.ErrNotExist)

		r.d.hold = make(chan struct{})
		f.Save("two") // stuck in its commit
		synctest.Wait()
		r.external(osPath("/state/rm.json"), "\"theirs\"\n", fsnotify.Write)
		elapse(2 * settleMax)
		assert.Empty(t, c.take(), "the check did not wait for the save queued before it")
		close(r.d.hold) // "two" lands over "theirs"; the check then finds "two"
		require.NoError(t, f.Flush(context.Background()))
		elapse(settleMax)
		assert.Empty(t, c.take(), "the own save that replaced an external write was echoed")
		content, _ := r.d.content(osPath("/state/rm.json"))
		assert.Equal(t, "\"two\"\n", content)
	})
}

// fn runs one call at a time off the writer: while it runs, saves go on
// and newer changes wait; only the newest is delivered after it returns.
// stop waits for a running fn, and nothing is delivered after it.
func TestWatchSlowFnSeesNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, osPath("/state/slow.json"))
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
			r.external(osPath("/state/slow.json"), `"`+v+"\"\n", fsnotify.Write)
			elapse(settleQuiet)
		}
		f.Save("own") // the writer is not held by the blocked fn
		require.NoError(t, f.Flush(context.Background()))
		release <- struct{}{} // "a" returns; "d" is next, "b" and "c" were replaced
		synctest.Wait()
		r.external(osPath("/state/slow.json"), "\"e\"\n", fsnotify.Write)
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
		a, _ := Open[string](r.s, osPath("/state/a.json"))
		b, _ := Open[string](r.s, osPath("/state/b.json"))
		o, _ := Open[string](r.s, osPath("/other/o.json"))
		ca, ca2, cb, co := newCalls(), newCalls(), newCalls(), newCalls()
		stopA, stopA2, stopB, stopO := watchT(t, a, ca), watchT(t, a, ca2), watchT(t, b, cb), watchT(t, o, co)
		dirs, closed, created := r.n.state()
		assert.Equal(t, map[string]int{osPath("/state"): 1, osPath("/other"): 1}, dirs)
		assert.Equal(t, 1, created, "notifiers")
		assert.False(t, closed)
		r.external(osPath("/state/a.json"), "\"x\"\n", fsnotify.Write)
		elapse(settleQuiet)
		assert.Len(t, ca.take(), 1)
		assert.Len(t, ca2.take(), 1)
		assert.Empty(t, cb.take())
		stopO()
		stopO() // a second stop does nothing
		dirs, _, _ = r.n.state()
		assert.Equal(t, map[string]int{osPath("/state"): 1}, dirs)
		stopA()
		stopB()
		r.external(osPath("/state/a.json"), "\"y\"\n", fsnotify.Write)
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
		a, _ := Open[string](r.s, osPath("/state/a.json"))
		b, _ := Open[string](r.s, osPath("/state/b.json"))
		b.Save("mine")
		require.NoError(t, b.Flush(context.Background()))
		ca, cb := newCalls(), newCalls()
		defer watchT(t, a, ca)()
		defer watchT(t, b, cb)()
		r.external(osPath("/state/a.json"), "\"lost\"\n") // its event was lost
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
		f, _ := Open[string](r.s, osPath("/state/c.json"))
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
		f, _ := Open[string](r.s, osPath("/state/e.json"))
		errNo := errors.New("too many open files")
		r.s.hooks.newNotifier = func() (notifier, error) { return nil, errNo }
		_, err := f.Watch(newCalls().fn)
		assert.ErrorIs(t, err, errNo)
		assert.ErrorContains(t, err, osPath("/state/e.json"))
	})
}

// A watched directory that goes (Remove or Rename of its name: inotify or
// fsnotify then drop its watch) reports its file gone, is not added again
// while it is missing, and is added again within rearmEvery once it is back,
// with a check that reports what was written there meanwhile. The re-add
// runs off the watch loop: the fake's Add, like fsnotify's, cannot proceed
// until the loop takes an error the notifier is sending, so a loop that
// called Add itself would deadlock here.
func TestWatchRearmsLostDirectory(t *testing.T) {
	for _, op := range []fsnotify.Op{fsnotify.Remove, fsnotify.Rename} {
		t.Run(op.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newWatchRig(t)
				f, _ := Open[string](r.s, osPath("/state/a.json"))
				f.Save("one")
				require.NoError(t, f.Flush(context.Background()))
				c := newCalls()
				stop := watchT(t, f, c)
				defer stop()
				r.n.addHook = func(string) { r.n.fail(errors.New("inotify queue overflow")) }

				r.setGone(osPath("/state"), true)
				r.externalRemove(osPath("/state/a.json"))
				r.n.emit(osPath("/state"), op)
				elapse(settleMax)
				got := c.take()
				require.Len(t, got, 1)
				assert.ErrorIs(t, got[0].err, fs.ErrNotExist)
				elapse(5 * rearmEvery)
				assert.Equal(t, 1, r.n.addCount(osPath("/state")), "added again while missing")

				r.external(osPath("/state/a.json"), "\"two\"\n") // no events: nothing watches the new directory yet
				r.setGone(osPath("/state"), false)
				elapse(rearmEvery + settleMax)
				assert.Equal(t, 2, r.n.addCount(osPath("/state")), "added again once back")
				got = c.take()
				require.Len(t, got, 1, "the check after the re-add")
				assert.Equal(t, "two", got[0].v)

				r.external(osPath("/state/a.json"), "\"three\"\n", fsnotify.Create)
				elapse(settleMax)
				got = c.take()
				require.Len(t, got, 1, "events flow again")
				assert.Equal(t, "three", got[0].v)
				elapse(5 * rearmEvery)
				assert.Equal(t, 2, r.n.addCount(osPath("/state")), "no retries once watched")
			})
		})
	}
}

// Another directory renamed over a watched one's name shows only as a
// Create of that name in its parent (fsnotify reports nothing for the old
// directory when its parent is watched too): the watch is added again at
// once and the file checked.
func TestWatchDirectoryReplacedInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, osPath("/state/a.json"))
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		r.external(osPath("/state/a.json"), "\"swapped\"\n")
		r.n.emit(osPath("/state"), fsnotify.Create)
		elapse(settleMax)
		assert.Equal(t, 2, r.n.addCount(osPath("/state")))
		got := c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "swapped", got[0].v)
	})
}

// A watch that stops while its directory is lost ends the retries for it
// (even once the directory is back), and a Watch started in a lost
// directory makes and adds it at once, checks the other watches there, and
// ends the retries.
func TestWatchStopAndStartWhileLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, osPath("/state/a.json"))
		stop := watchT(t, f, newCalls())
		g, _ := Open[string](r.s, osPath("/other/b.json"))
		stopOther := watchT(t, g, newCalls())
		r.setGone(osPath("/state"), true)
		r.n.emit(osPath("/state"), fsnotify.Remove)
		elapse(rearmEvery / 2)
		stop()
		r.setGone(osPath("/state"), false)
		elapse(5 * rearmEvery)
		assert.Equal(t, 1, r.n.addCount(osPath("/state")), "retries after the last watch in it stopped")

		ca := newCalls()
		stop = watchT(t, f, ca) // /state is new to the watcher again
		assert.Equal(t, 2, r.n.addCount(osPath("/state")))
		r.setGone(osPath("/state"), true)
		r.n.emit(osPath("/state"), fsnotify.Remove)
		elapse(settleMax)
		ca.take()
		r.external(osPath("/state/a.json"), "\"meanwhile\"\n") // unseen: /state is not watched
		h, _ := Open[string](r.s, osPath("/state/c.json"))
		stopC := watchT(t, h, newCalls()) // in a lost directory: added at once
		assert.Equal(t, 3, r.n.addCount(osPath("/state")))
		elapse(settleMax) // within the retry's second, with /state still gone for it
		got := ca.take()
		require.Len(t, got, 1, "the other watch in the directory is checked")
		assert.Equal(t, "meanwhile", got[0].v)
		r.setGone(osPath("/state"), false)
		elapse(5 * rearmEvery)
		assert.Equal(t, 3, r.n.addCount(osPath("/state")), "no retries once a Watch added it")
		stopC()
		stop()
		stopOther()
		_, closed, _ := r.n.state()
		assert.True(t, closed)
	})
}

// A loss seen while the directory is being added again (it goes at once
// after the Add) is not wiped by that Add: the directory is added again
// once it is back. Both the retry and a new Watch add.
func TestWatchLostDuringReadd(t *testing.T) {
	for _, by := range []string{"retry", "Watch"} {
		t.Run(by, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newWatchRig(t)
				f, _ := Open[string](r.s, osPath("/state/a.json"))
				stop := watchT(t, f, newCalls())
				defer stop()
				r.setGone(osPath("/state"), true)
				r.n.emit(osPath("/state"), fsnotify.Remove)
				elapse(settleMax)
				once := true
				r.n.addHook = func(dir string) {
					if dir != osPath("/state") || !once {
						return
					}
					once = false
					r.setGone(osPath("/state"), true)
					r.n.emit(osPath("/state"), fsnotify.Remove)
					r.n.emit(osPath("/state/unrelated"), fsnotify.Write) // the loop is done with the Remove
				}
				switch by {
				case "retry":
					r.setGone(osPath("/state"), false)
					elapse(rearmEvery)
				case "Watch":
					g, _ := Open[string](r.s, osPath("/state/b.json"))
					stopG := watchT(t, g, newCalls())
					defer stopG()
				}
				require.False(t, once, "the hook ran")
				assert.Equal(t, 2, r.n.addCount(osPath("/state")))
				r.setGone(osPath("/state"), false)
				elapse(rearmEvery + settleMax)
				assert.Equal(t, 3, r.n.addCount(osPath("/state")), "added again after the loss during the add")
			})
		})
	}
}

// A retry whose Add fails (not for a missing directory) logs once and
// keeps trying; a file at the directory's name is not a directory back,
// and a Watch there fails with ENOTDIR.
func TestWatchRetryErrorsAndFileAtName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged bytes.Buffer
		r := newWatchRig(t)
		r.s.log = slog.New(slog.NewTextHandler(&logged, nil))
		f, _ := Open[string](r.s, osPath("/state/a.json"))
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		r.setGone(osPath("/state"), true)
		r.n.emit(osPath("/state"), fsnotify.Remove)
		elapse(settleMax)
		c.take()

		r.setNotDir(osPath("/state"), true)
		r.setGone(osPath("/state"), false)
		elapse(3 * rearmEvery)
		assert.Equal(t, 1, r.n.addCount(osPath("/state")), "a file at the name was added as the directory")
		g, _ := Open[string](r.s, osPath("/state/b.json"))
		_, err := g.Watch(func(string, error) {})
		assert.ErrorIs(t, err, syscall.ENOTDIR)

		r.setNotDir(osPath("/state"), false)
		r.n.setAddErr(syscall.ENOSPC) // inotify's max_user_watches
		elapse(5 * rearmEvery)
		assert.Equal(t, 1, strings.Count(logged.String(), "cannot watch a directory again"), "logged once: %s", logged.String())
		assert.Contains(t, logged.String(), "no space left on device")
		r.n.setAddErr(nil)
		r.external(osPath("/state/a.json"), "\"back\"\n")
		elapse(rearmEvery + settleMax)
		got := c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "back", got[0].v)
	})
}
