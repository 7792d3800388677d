package statefile

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program that rewrites the file in place and pauses between its writes
// far longer than the settle windows is reported once, with the finished
// file; the half-written one is neither reported nor moved.
func TestWatchWaitsOutSlowInPlaceWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		path := osPath("/state/slow.json")
		f, _ := Open[string](r.s, path)
		require.NoError(t, f.Save("start"))
		require.NoError(t, f.Flush(context.Background()))
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()

		r.external(path, "", fsnotify.Write) // O_TRUNC
		r.external(path, `"half`, fsnotify.Write)
		elapse(corruptQuiet - 100*time.Millisecond) // the writer pauses: many settle windows
		assert.Empty(t, c.take(), "a half-written file was reported")
		r.external(path, `"half done"`+"\n", fsnotify.Write)
		elapse(2 * corruptQuiet)
		got := c.take()
		require.Len(t, got, 1, "reports: got %v, want the finished file once", got)
		assert.Equal(t, "half done", got[0].v)
		require.NoError(t, got[0].err)
		content, ok := r.d.content(path)
		assert.True(t, ok, "the file was moved")
		assert.Equal(t, `"half done"`+"\n", content)
	})
}

// Bytes that stay unparsable are reported once, after corruptQuiet, as a
// CorruptError with no Aside; the watch leaves them where they are.
func TestWatchReportsLastingCorruptInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		path := osPath("/state/bad.json")
		f, _ := Open[string](r.s, path)
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()

		r.external(path, "{oops", fsnotify.Write)
		elapse(corruptQuiet - time.Millisecond)
		assert.Empty(t, c.take(), "reported before the bytes stayed the same for corruptQuiet")
		elapse(settleQuiet + time.Millisecond)
		got := c.take()
		require.Len(t, got, 1, "reports: got %v, want one", got)
		var ce *CorruptError
		require.ErrorAs(t, got[0].err, &ce)
		assert.ErrorIs(t, got[0].err, ErrCorrupt)
		assert.Empty(t, ce.Aside, "Aside: got %q, want empty: a watch moves nothing", ce.Aside)
		assert.Contains(t, ce.Error(), "left in place")
		content, ok := r.d.content(path)
		assert.True(t, ok && content == "{oops", "the file: got %q (present %v), want it untouched", content, ok)

		r.n.emit(path, fsnotify.Chmod) // a touch: same bytes, nothing new
		elapse(2 * corruptQuiet)
		assert.Empty(t, c.take(), "the same corrupt bytes reported twice")
		r.external(path, `"fixed"`+"\n", fsnotify.Write)
		elapse(settleQuiet)
		got = c.take()
		require.Len(t, got, 1)
		assert.Equal(t, "fixed", got[0].v, "the repaired file is reported at the settle window")
	})
}
