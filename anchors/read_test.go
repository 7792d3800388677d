package anchors

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

// The tests of the background read: when the file is read, how edits made
// before it merge with it, and what a failed read does.

// TestOpenReadsOnce: Open queues one read, in the background (a read that
// hangs does not hold Open), and Gets never read again.
func TestOpenReadsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("x", "y"))
		f.Gate = make(chan struct{})
		s := openFake(t, f, Options{})
		synctest.Wait()
		assert.Equal(t, 1, f.Loads(), "Open queues the read")
		close(f.Gate)
		got, ok := getWait(t, s, "y")
		assert.True(t, ok)
		assert.Equal(t, "disk-y", got.Item)
		_, _ = s.Get("x")
		assert.Equal(t, 1, f.Loads(), "reads of the file")
		keyedtest.Wait(time.Minute)
		assert.Empty(t, f.Ops(), "reading must not save")
	})
}

// TestEditsBeforeReadWin: places set and forgotten before the file is read
// override the file's, and the first save keeps the file's other places.
func TestEditsBeforeReadWin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("w", "x", "y", "z"))
		f.Gate = make(chan struct{})
		s := openFake(t, f, Options{})
		s.Set("y", at("new-y"))
		s.Forget("z")
		s.Set("n", at("n"))
		keyedtest.Wait(time.Minute)
		assert.Empty(t, f.Ops(), "a save before the read would drop the file's places")

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := s.Flush(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "Flush while the read hangs")
		assert.Contains(t, err.Error(), "/state/anchors.json")

		close(f.Gate) // the read returns; it queues the waiting save itself
		synctest.Wait()
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, []string{"w", "x", "y", "n"}, ops[0].Value.chats())
		assert.Equal(t, "new-y", ops[0].Value.Anchors[2].Item)
		assert.Equal(t, 1, f.Loads())
	})
}

// TestForgetBeforeReadSaves: forgetting a chat before the file is read, with
// no Set at all, still saves the file without that chat's place.
func TestForgetBeforeReadSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("x", "y"))
		s := openFake(t, f, Options{})
		s.Forget("x")
		require.NoError(t, s.Flush(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 1, "the forgotten place must leave the file")
		assert.Equal(t, []string{"y"}, ops[0].Value.chats())
		_, ok := s.Get("x")
		assert.False(t, ok)
	})
}

func TestMaxAppliesToFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("a", "b", "c", "d", "e"))
		s := openFake(t, f, Options{Max: 3})
		_, ok := getWait(t, s, "a")
		assert.False(t, ok, "the oldest places beyond Max are dropped at the read")
		assert.Equal(t, 3, s.Len())
		synctest.Wait()
		ops := f.Ops()
		require.Len(t, ops, 1, "a file over Max is rewritten at once")
		assert.Equal(t, []string{"c", "d", "e"}, ops[0].Value.chats())
	})
}

// TestCloseBeforeRead: Close gives up on a hung read by its deadline, and
// the save still happens when the read returns.
func TestCloseBeforeRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("old"))
		f.Gate = make(chan struct{})
		s := openFake(t, f, Options{})
		s.Set("a", at("a"))
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, s.Close(ctx), context.DeadlineExceeded)
		close(f.Gate)
		synctest.Wait()
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, []string{"old", "a"}, ops[0].Value.chats())
	})
}

func TestReadErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		f.LoadErr = &statefile.CorruptError{Path: "/state/anchors.json", Aside: "/x.corrupt", Err: errors.New("bad")}
		s := openFake(t, f, Options{})
		assert.ErrorIs(t, s.Load(t.Context()), statefile.ErrCorrupt)
		s.Set("a", at("a"))
		assert.NoError(t, s.Flush(t.Context()), "a corrupt file does not stop saving")
		assert.Len(t, f.Ops(), 1)

		f = newFake(fileData{})
		f.LoadErr = errors.New("input/output error")
		s = openFake(t, f, Options{})
		s.Set("a", at("a"))
		err := s.Flush(t.Context())
		assert.ErrorContains(t, err, "input/output error", "Flush must say saves are off")
		assert.Empty(t, f.Ops(), "a file that could not be read must not be overwritten")
		got, ok := s.Get("a")
		assert.True(t, ok && got.Item == "a", "memory still works")
	})
}

// TestFlushWhileReadQueuesWaitingSave: a Set whose save found the file
// unread is queued by the read. A Flush that runs after the read merged the
// file but before that save is queued must not report success: it either
// waits for the save or says what it did not wait for. The test holds the
// read's save at the file's Save, before anything is queued (the window the
// race needs), and flushes with a context that has already ended.
func TestFlushWhileReadQueuesWaitingSave(t *testing.T) {
	f := newFake(disk("old"))
	f.Gate = make(chan struct{})
	held := heldSave{fakeFile: f, entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := open(held, Options{}, nil)
	t.Cleanup(func() { s.sched.Stop() })
	s.Set("a", at("a"))
	require.True(t, s.sched.Flush(), "the save finds the file unread and waits for the read")

	close(f.Gate) // the read merges the file, then stops in its save
	<-held.entered
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.Flush(ctx)
	queued := len(f.Ops())
	close(held.release)
	assert.True(t, err != nil || queued == 1,
		"Flush returned nil with the last Set not yet queued: got %d saves, want 1 (or an error)", queued)

	<-s.Loaded()
	require.NoError(t, s.Flush(t.Context()))
	ops := f.Ops()
	require.Len(t, ops, 1)
	assert.Equal(t, []string{"old", "a"}, ops[0].Value.chats())
}

// heldSave is the fake file with each Save held until release closes: it
// says on entered that a save has begun, and queues nothing before release.
type heldSave struct {
	*fakeFile
	entered chan struct{}
	release chan struct{}
}

func (h heldSave) Save(v fileData) error {
	select {
	case h.entered <- struct{}{}:
	default:
	}
	<-h.release
	return h.fakeFile.Save(v)
}
