package drafts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

// TestOpenNeverWaitsForRead: while the file's read does not return (a dead
// network home directory), Open returns, and Set, Put, Delete, Get and
// Tabs answer at once from memory. No save is queued before the read, as
// it would drop the file's drafts; once the read lands, the edits made
// since Open win over the file's drafts of the same tabs, and one save
// holds both.
func TestOpenNeverWaitsForRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := time.Now().Add(-time.Minute).UTC()
		f := &fakeFile{Start: time.Now(), Gate: make(chan struct{}), LoadValue: fileData{Version: 1, Drafts: map[string]Draft{
			"file":    {Text: "from the file", UpdatedAt: old},
			"edited":  {Text: "old text", UpdatedAt: old},
			"deleted": {Text: "deleted since Open", UpdatedAt: old},
		}}}
		done := make(chan []string, 1)
		var s *Store
		go func() {
			s = open(f, Options{}, nil)
			s.Set("edited", "new text")
			s.Delete("deleted")
			_, ok := s.Get("file")
			if ok {
				done <- []string{"Get knew the unread file"}
				return
			}
			done <- s.Tabs()
		}()
		synctest.Wait()
		if len(done) == 0 {
			close(f.Gate) // so that a failing version fails rather than hangs
			t.Fatal("Open, Set, Delete, Get or Tabs waited for the file's read")
		}
		assert.Equal(t, []string{"edited"}, <-done, "Tabs before the read: only what was set since Open")
		t.Cleanup(func() { s.sched.Stop() })
		select {
		case <-s.Loaded():
			t.Fatal("Loaded closed before the read returned")
		default:
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.ErrorIs(t, s.Load(ctx), context.DeadlineExceeded, "Load while the read hangs")
		keyedtest.Wait(5 * time.Second) // well past the settle: the save waits for the read
		assert.Empty(t, f.Ops(), "a save before the read would drop the file's drafts")

		close(f.Gate)
		<-s.Loaded()
		require.NoError(t, s.Load(t.Context()))
		synctest.Wait()
		want := map[string]string{"file": "from the file", "edited": "new text"}
		assert.Equal(t, []string{"edited", "file"}, s.Tabs())
		ops := f.Ops()
		require.Len(t, ops, 1, "one save once the read landed")
		assert.Equal(t, want, ops[0].Value.texts(), "the save: the file's drafts under the edits since Open")
	})
}

// TestFlushWaitsForRead: a Flush before the read landed waits for it and
// for the save it queues, so nothing typed before the read is lost at quit.
func TestFlushWaitsForRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeFile{Start: time.Now(), Gate: make(chan struct{})}
		s := open(f, Options{}, nil)
		t.Cleanup(func() { s.sched.Stop() })
		s.Set("a", "typed before the read")
		flushed := make(chan error, 1)
		go func() { flushed <- s.Flush(t.Context()) }()
		synctest.Wait()
		assert.Empty(t, flushed, "Flush returned before the read")
		close(f.Gate)
		require.NoError(t, <-flushed)
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, map[string]string{"a": "typed before the read"}, ops[0].Value.texts())
	})
}

// The errors the package returns are one line each, even when they join
// several (a read that failed and a watch that could not start).
func TestErrorTextsOneLine(t *testing.T) {
	f := &fakeFile{LoadErr: errors.Join(errors.New("input/output"), errors.New("again")), WatchErr: errors.New("inotify\nlimit")}
	s, err := openSync(t.Context(), f, Options{Watch: true})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n", "Load: got %q", err.Error())
	s.Set("a", "x") // Close's save, due before the file could be read, reads it again
	f.SetSaveErr(statefile.ErrClosed)
	ferr := s.Close(t.Context())
	require.Error(t, ferr)
	assert.NotContains(t, ferr.Error(), "\n", "Close: got %q", ferr.Error())
	assert.True(t, strings.HasPrefix(ferr.Error(), "drafts: "), "got %q, want the package prefix", ferr.Error())

	f = &fakeFile{WatchErr: errors.New("inotify limit")}
	s, err = openSync(t.Context(), f, Options{Watch: true})
	require.Error(t, err)
	assert.ErrorContains(t, err, "not watching")
	f.SetSaveErr(errors.Join(statefile.ErrClosed, errors.New("second")))
	s.Set("a", "x")
	s.sched.Flush() // the save, now rather than at the settle
	ferr = s.Close(t.Context())
	require.ErrorIs(t, ferr, statefile.ErrClosed)
	assert.NotContains(t, ferr.Error(), "\n", "Close: got %q", ferr.Error())
}
