package drafts

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offmain/offmain/statefile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeFile records when the Store queues saves, so synctest can check the
// timing; it keeps the very map each Save was handed. Its Watch keeps fn,
// which a test calls to deliver a change (see watch_test.go).
type fakeFile struct {
	start    time.Time
	load     fileData
	loadErr  error
	watchErr error // returned by Watch

	mu      sync.Mutex // protects the fields below
	saveErr error
	ops     []fileOp
	flushed []int // len(ops) at each Flush
	watchFn func(fileData, error)
	watches int // Watch calls
	stops   int // stop calls
}

type fileOp struct {
	at      time.Duration
	remove  bool
	drafts  map[string]Draft
	deleted map[string]time.Time
}

func (f *fakeFile) Save(v fileData) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, fileOp{at: time.Since(f.start), drafts: v.Drafts, deleted: v.Deleted})
	return f.saveErr
}

func (f *fakeFile) Remove() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, fileOp{at: time.Since(f.start), remove: true})
	return f.saveErr
}

func (f *fakeFile) LoadContext(context.Context) (fileData, error) { return f.load, f.loadErr }

func (f *fakeFile) Flush(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushed = append(f.flushed, len(f.ops))
	return nil
}

func (f *fakeFile) saved() []fileOp {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fileOp(nil), f.ops...)
}

// texts reduces an op to tab → text, for short assertions.
func (o fileOp) texts() map[string]string {
	m := map[string]string{}
	for tab, d := range o.drafts {
		m[tab] = d.Text
	}
	return m
}

func openFake(t *testing.T, opts Options, load fileData) (*Store, *fakeFile) {
	t.Helper()
	f := &fakeFile{start: time.Now(), load: load}
	s, err := open(t.Context(), f, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.sched.Stop() })
	return s, f
}

// wait moves the bubble's fake clock forward by d (no real time passes) and
// lets the goroutines that woke finish.
func wait(d time.Duration) {
	tm := time.NewTimer(d)
	<-tm.C
	synctest.Wait()
}

func TestSetSavesAfterSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		s.Set("a", "hi")
		wait(299 * time.Millisecond)
		assert.Empty(t, f.saved(), "saved before the edits settled")
		wait(time.Millisecond)
		ops := f.saved()
		require.Len(t, ops, 1)
		assert.Equal(t, 300*time.Millisecond, ops[0].at)
		assert.Equal(t, map[string]string{"a": "hi"}, ops[0].texts())
	})
}

func TestTypingSavesByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		var text strings.Builder
		for range 167 { // a key every 30ms, 0 to 4.98s
			text.WriteByte('x')
			s.Set("a", text.String())
			wait(30 * time.Millisecond)
		}
		wait(time.Minute)
		ops := f.saved()
		var at []time.Duration
		var lens []int
		for _, o := range ops {
			at = append(at, o.at)
			lens = append(lens, len(o.drafts["a"].Text))
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
			wait(20 * time.Millisecond)
		}
		wait(time.Second)
		ops := f.saved()
		require.Len(t, ops, 2)
		assert.Equal(t, 70*time.Millisecond, ops[0].at)
		assert.Equal(t, 130*time.Millisecond, ops[1].at)
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
		ops := f.saved()
		require.Len(t, ops, 1)
		assert.Equal(t, map[string]string{"a": "one"}, ops[0].texts(), "the handed-over map changed")
		assert.Equal(t, []string{"/tmp/x.png"}, ops[0].drafts["a"].Attachments)
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
		ops := f.saved()
		require.Len(t, ops, 1)
		assert.Equal(t, []string{"/tmp/a.png"}, ops[0].drafts["t"].Attachments, "the saved draft changed")
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
		ops := f.saved()
		require.Len(t, ops, 3)
		assert.Equal(t, map[string]string{"a": "x", "b": "y"}, ops[0].texts())
		assert.Equal(t, map[string]string{"b": "y"}, ops[1].texts())
		assert.True(t, ops[2].remove, "the last draft gone must remove the file")
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
		wait(time.Minute)
		assert.Len(t, f.saved(), 1, "a no-op edit must not save")
		require.NoError(t, s.Flush(t.Context()))
		assert.Len(t, f.saved(), 1, "Flush with nothing new queued a save")
	})
}

func TestFlushQueuesAtOnceThenWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		wait(10 * time.Millisecond)
		s.Set("a", "x")
		require.NoError(t, s.Flush(t.Context()))
		ops := f.saved()
		require.Len(t, ops, 1)
		assert.Equal(t, 10*time.Millisecond, ops[0].at, "Flush must not wait for the settle window")
		assert.Equal(t, []int{1}, f.flushed, "the file's Flush must come after the save was queued")
		wait(time.Minute)
		assert.Len(t, f.saved(), 1, "the settle timer must not save the flushed edit again")
	})
}

func TestCloseSavesThenStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		s.Set("a", "x")
		require.NoError(t, s.Close(t.Context()))
		require.Len(t, f.saved(), 1, "Close must queue the pending edit")
		s.Set("a", "after close")
		wait(time.Minute)
		assert.Len(t, f.saved(), 1, "saved after Close")
		d, _ := s.Get("a")
		assert.Equal(t, "after close", d.Text, "memory still changes after Close")
		require.NoError(t, s.Close(t.Context()), "second Close")
	})
}

func TestLostSaveReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := openFake(t, Options{}, fileData{})
		f.saveErr = statefile.ErrClosed
		s.Set("a", "x")
		err := s.Flush(t.Context())
		assert.ErrorIs(t, err, statefile.ErrClosed)
		f.mu.Lock()
		f.saveErr = nil
		f.mu.Unlock()
		s.Set("a", "y")
		assert.NoError(t, s.Flush(t.Context()), "a later queued save clears it")
	})
}

func TestMaxAge(t *testing.T) {
	tests := []struct {
		name   string
		maxAge time.Duration
		want   []string
	}{
		{"default 30 days", 0, []string{"day", "week"}},
		{"one hour", time.Hour, nil},
		{"two days", 48 * time.Hour, []string{"day"}},
		{"never", -1, []string{"day", "month", "week"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				at := func(ago time.Duration) Draft { return Draft{Text: "t", UpdatedAt: time.Now().Add(-ago)} }
				load := fileData{Version: 1, Drafts: map[string]Draft{
					"day":   at(24 * time.Hour),
					"week":  at(7 * 24 * time.Hour),
					"month": at(31 * 24 * time.Hour),
					"empty": {UpdatedAt: time.Now()},
				}}
				s, f := openFake(t, Options{MaxAge: tt.maxAge}, load)
				assert.Equal(t, tt.want, s.Tabs())
				wait(time.Minute)
				ops := f.saved()
				require.Len(t, ops, 1, "dropping drafts must rewrite the file")
				if len(tt.want) == 0 {
					assert.True(t, ops[0].remove)
				} else {
					assert.Len(t, ops[0].drafts, len(tt.want))
				}
			})
		})
	}
}

func TestOpenLoadErrors(t *testing.T) {
	corrupt := &statefile.CorruptError{Path: "/x/drafts.json", Aside: "/x/drafts.json.corrupt-1", Err: errors.New("bad json")}
	f := &fakeFile{loadErr: corrupt}
	s, err := open(t.Context(), f, Options{})
	require.NotNil(t, s, "a corrupt file must still give a usable store")
	assert.ErrorIs(t, err, statefile.ErrCorrupt)
	var ce *statefile.CorruptError
	assert.ErrorAs(t, err, &ce)
	s.sched.Stop()

	f = &fakeFile{loadErr: errors.New("input/output error")}
	s, err = open(t.Context(), f, Options{})
	assert.Nil(t, s, "an unreadable file must not give a store that would overwrite it")
	assert.ErrorContains(t, err, "input/output error")
}
