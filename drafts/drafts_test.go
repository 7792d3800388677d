package drafts

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offmain/offmain/internal/fakefile"
	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeFile records when the Store queues saves, so synctest can check the
// timing; each op keeps the very map Save was handed. Its Watch keeps fn,
// which a test calls through Deliver (see watch_test.go).
type fakeFile = fakefile.File[fileData]

// texts reduces a file to tab → text, for short assertions.
func (d fileData) texts() map[string]string {
	m := map[string]string{}
	for tab, dr := range d.Drafts {
		m[tab] = dr.Text
	}
	return m
}

// openSync is open followed by Load, as OpenContext is Open followed by
// Load: the Store once its file's read has landed, and what the read met.
func openSync(ctx context.Context, f file, opts Options) (*Store, error) {
	s := open(f, opts, nil)
	return s, s.Load(ctx)
}

func openFake(t *testing.T, opts Options, load fileData) (*Store, *fakeFile) {
	t.Helper()
	f := &fakeFile{Start: time.Now(), LoadValue: load}
	s, err := openSync(t.Context(), f, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.sched.Stop() })
	return s, f
}

func TestSetSavesAfterSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		s.Set("a", "hi")
		keyedtest.Wait(299 * time.Millisecond)
		assert.Empty(t, f.Ops(), "saved before the edits settled")
		keyedtest.Wait(time.Millisecond)
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, 300*time.Millisecond, ops[0].At)
		assert.Equal(t, map[string]string{"a": "hi"}, ops[0].Value.texts())
	})
}

func TestTypingSavesByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		var text strings.Builder
		for range 167 { // a key every 30ms, 0 to 4.98s
			text.WriteByte('x')
			s.Set("a", text.String())
			keyedtest.Wait(30 * time.Millisecond)
		}
		keyedtest.Wait(time.Minute)
		ops := f.Ops()
		var at []time.Duration
		var lens []int
		for _, o := range ops {
			at = append(at, o.At)
			lens = append(lens, len(o.Value.Drafts["a"].Text))
		}
		assert.Equal(t, []time.Duration{2000 * time.Millisecond, 4010 * time.Millisecond, 5280 * time.Millisecond}, at,
			"saves at max wait while typing, then at settle")
		assert.Equal(t, []int{67, 134, 167}, lens, "each save holds the text typed so far")
	})
}

func TestCustomTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{Settle: 50 * time.Millisecond, MaxWait: 70 * time.Millisecond}, fileData{})
		for range 5 {
			s.Set("a", time.Now().String())
			keyedtest.Wait(20 * time.Millisecond)
		}
		keyedtest.Wait(time.Second)
		ops := f.Ops()
		require.Len(t, ops, 2)
		assert.Equal(t, 70*time.Millisecond, ops[0].At)
		assert.Equal(t, 130*time.Millisecond, ops[1].At)
	})
}

// TestSaveHandsOverACopy: the map given to statefile must never change
// afterwards, whatever the caller does next.
func TestSaveHandsOverACopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		s.Put("a", Draft{Text: "one", Attachments: []string{"/tmp/x.png"}})
		require.NoError(t, s.Flush(t.Context()))
		s.Set("a", "two")
		s.Set("b", "new")
		s.Delete("a")
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, map[string]string{"a": "one"}, ops[0].Value.texts(), "the handed-over map changed")
		assert.Equal(t, []string{"/tmp/x.png"}, ops[0].Value.Drafts["a"].Attachments)
	})
}

// TestPutAndGetCopyAttachments: the Store keeps its own copy of a draft's
// attachments, so changing the slice given to Put, or the one Get returned,
// changes neither the draft nor a save already handed to statefile.
func TestPutAndGetCopyAttachments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		att := []string{"/tmp/a.png"}
		s.Put("t", Draft{Text: "x", Attachments: att})
		att[0] = "/tmp/changed-after-put.png"
		got, _ := s.Get("t")
		assert.Equal(t, []string{"/tmp/a.png"}, got.Attachments, "Put kept the caller's slice")
		require.NoError(t, s.Flush(t.Context()))
		got.Attachments[0] = "/tmp/changed-after-get.png"
		again, _ := s.Get("t")
		assert.Equal(t, []string{"/tmp/a.png"}, again.Attachments, "Get returned the Store's own slice")
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, []string{"/tmp/a.png"}, ops[0].Value.Drafts["t"].Attachments, "the saved draft changed")
	})
}

func TestEmptyDeletesAndLastRemovesFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		ctx := t.Context()
		s.Set("a", "x")
		s.Set("b", "y")
		require.NoError(t, s.Flush(ctx))
		s.Set("a", "")
		_, ok := s.Get("a")
		assert.False(t, ok, "empty text must delete the draft")
		require.NoError(t, s.Flush(ctx))
		s.Delete("b")
		require.NoError(t, s.Flush(ctx))
		ops := f.Ops()
		require.Len(t, ops, 3)
		assert.Equal(t, map[string]string{"a": "x", "b": "y"}, ops[0].Value.texts())
		assert.Equal(t, map[string]string{"b": "y"}, ops[1].Value.texts())
		assert.True(t, ops[2].Remove, "the last draft gone must remove the file")
		assert.Empty(t, s.Tabs())
	})
}

func TestNoChangeNoSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		s.Set("a", "x")
		require.NoError(t, s.Flush(t.Context()))
		s.Set("a", "x")     // same text
		s.Set("none", "")   // clearing a tab without a draft
		s.Delete("missing") // deleting a tab without a draft
		keyedtest.Wait(time.Minute)
		assert.Len(t, f.Ops(), 1, "a no-op edit must not save")
		require.NoError(t, s.Flush(t.Context()))
		assert.Len(t, f.Ops(), 1, "Flush with nothing new queued a save")
	})
}

func TestFlushQueuesAtOnceThenWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		keyedtest.Wait(10 * time.Millisecond)
		s.Set("a", "x")
		require.NoError(t, s.Flush(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, 10*time.Millisecond, ops[0].At, "Flush must not wait for the settle window")
		assert.Equal(t, []int{1}, f.Flushes(), "the file's Flush must come after the save was queued")
		keyedtest.Wait(time.Minute)
		assert.Len(t, f.Ops(), 1, "the settle timer must not save the flushed edit again")
	})
}

func TestCloseSavesThenStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		s.Set("a", "x")
		require.NoError(t, s.Close(t.Context()))
		require.Len(t, f.Ops(), 1, "Close must queue the pending edit")
		s.Set("a", "after close")
		keyedtest.Wait(time.Minute)
		assert.Len(t, f.Ops(), 1, "saved after Close")
		d, _ := s.Get("a")
		assert.Equal(t, "after close", d.Text, "memory still changes after Close")
		require.NoError(t, s.Close(t.Context()), "second Close")
	})
}

func TestLostSaveReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		f.SetSaveErr(statefile.ErrClosed)
		s.Set("a", "x")
		err := s.Flush(t.Context())
		assert.ErrorIs(t, err, statefile.ErrClosed)
		f.SetSaveErr(nil)
		s.Set("a", "y")
		assert.NoError(t, s.Flush(t.Context()), "a later queued save clears it")
	})
}

// OnExpire runs once Load returns, so that an OnExpire that calls Load,
// Flush or Get (to show what was dropped beside what is kept) returns:
// called while the read held Load's waiters, it would wait for itself.
func TestOnExpireMayCallTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := Draft{Text: "old", UpdatedAt: time.Now().Add(-48 * time.Hour)}
		opened := make(chan *Store, 1) // the read may start before open returns
		told := make(chan []string, 1)
		f := &fakeFile{Start: time.Now(), LoadValue: fileData{Version: 1, Drafts: map[string]Draft{"a": old, "b": {Text: "new", UpdatedAt: time.Now()}}}}
		s := open(f, Options{MaxAge: time.Hour, OnExpire: func(map[string]Draft) {
			s := <-opened
			assert.NoError(t, s.Load(t.Context()))
			assert.NoError(t, s.Flush(t.Context()))
			told <- s.Tabs()
		}}, nil)
		opened <- s
		t.Cleanup(func() { s.sched.Stop() })
		require.NoError(t, s.Load(t.Context()))
		synctest.Wait()
		select {
		case tabs := <-told:
			assert.Equal(t, []string{"b"}, tabs)
		default:
			t.Fatal("OnExpire did not return")
		}
	})
}

// A draft is never dropped by a default: with MaxAge zero a draft of any
// age is kept and saved again. With MaxAge set, the older ones are dropped
// at the read and OnExpire is told which.
func TestMaxAge(t *testing.T) {
	tests := []struct {
		name   string
		maxAge time.Duration
		want   []string
	}{
		{"default keeps every draft", 0, []string{"day", "month", "week", "year"}},
		{"one hour", time.Hour, nil},
		{"two days", 48 * time.Hour, []string{"day"}},
		{"thirty days", 30 * 24 * time.Hour, []string{"day", "week"}},
		{"negative keeps every draft", -1, []string{"day", "month", "week", "year"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				at := func(ago time.Duration) Draft { return Draft{Text: "t", UpdatedAt: time.Now().Add(-ago)} }
				load := fileData{Version: 1, Drafts: map[string]Draft{
					"day":   at(24 * time.Hour),
					"week":  at(7 * 24 * time.Hour),
					"month": at(31 * 24 * time.Hour),
					"year":  at(400 * 24 * time.Hour),
					"empty": {UpdatedAt: time.Now()},
				}}
				var told []string
				s, f := openFake(t, Options{MaxAge: tt.maxAge, OnExpire: func(expired map[string]Draft) {
					told = slices.Sorted(maps.Keys(expired))
				}}, load)
				assert.Equal(t, tt.want, s.Tabs())
				var dropped []string
				for tab := range load.Drafts {
					if tab != "empty" && !slices.Contains(tt.want, tab) {
						dropped = append(dropped, tab)
					}
				}
				slices.Sort(dropped)
				keyedtest.Wait(time.Minute)
				assert.Equal(t, dropped, told, "the drafts OnExpire was told of")
				ops := f.Ops()
				require.Len(t, ops, 1, "dropping drafts must rewrite the file")
				if len(tt.want) == 0 {
					assert.True(t, ops[0].Remove)
				} else {
					assert.Len(t, ops[0].Value.Drafts, len(tt.want))
				}
			})
		})
	}
}

func TestOpenLoadErrors(t *testing.T) {
	corrupt := &statefile.CorruptError{Path: "/x/drafts.json", Aside: "/x/drafts.json.corrupt-1", Err: errors.New("bad json")}
	f := &fakeFile{LoadErr: corrupt}
	s, err := openSync(t.Context(), f, Options{})
	require.NotNil(t, s, "a corrupt file must still give a usable store")
	assert.ErrorIs(t, err, statefile.ErrCorrupt)
	var ce *statefile.CorruptError
	assert.ErrorAs(t, err, &ce)
	s.sched.Stop()

	f = &fakeFile{LoadErr: errors.New("input/output error")}
	s, err = openSync(t.Context(), f, Options{})
	require.NotNil(t, s, "the Store works in memory")
	assert.ErrorContains(t, err, "input/output error")
	s.Set("a", "typed")
	ferr := s.Close(t.Context())
	assert.ErrorContains(t, ferr, "input/output error", "Close says why nothing was saved")
	assert.Empty(t, f.Ops(), "an unreadable file must never be overwritten")
}
