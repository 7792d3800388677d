package anchors

import (
	"math"
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

// fakeFile records the saves the Store queues and lets a test hold its read
// (Gate). Its Watch keeps fn, which a test calls through Deliver (see
// watch_test.go).
type fakeFile = fakefile.File[fileData]

// chats lists a file's chats in file order: least recently set first.
func (d fileData) chats() []string {
	var c []string
	for _, r := range d.Anchors {
		c = append(c, r.Chat)
	}
	return c
}

func newFake(load fileData) *fakeFile {
	return &fakeFile{Start: time.Now(), Name: "/state/anchors.json", LoadValue: load}
}

func openFake(t *testing.T, f *fakeFile, opts Options) *Store {
	t.Helper()
	s := open(f, opts, nil)
	t.Cleanup(func() { s.sched.Stop() })
	return s
}

func at(item string) Anchor { return Anchor{Item: item, Offset: 1.5} }

func disk(chats ...string) fileData {
	d := fileData{Version: 1}
	for _, c := range chats {
		d.Anchors = append(d.Anchors, record{Chat: c, Anchor: Anchor{Item: "disk-" + c}})
	}
	return d
}

func TestSetSavesAfterSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		s := openFake(t, f, Options{})
		s.Set("c1", at("m1"))
		keyedtest.Wait(299 * time.Millisecond)
		assert.Empty(t, f.Ops(), "saved before the Sets settled")
		keyedtest.Wait(time.Millisecond)
		ops := f.Ops()
		require.Len(t, ops, 1)
		assert.Equal(t, 300*time.Millisecond, ops[0].At)
		require.Len(t, ops[0].Value.Anchors, 1)
		assert.Equal(t, "m1", ops[0].Value.Anchors[0].Item)
		assert.Equal(t, 1.5, ops[0].Value.Anchors[0].Offset)
	})
}

func TestScrollSavesByMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		s := openFake(t, f, Options{Settle: 100 * time.Millisecond, MaxWait: time.Second})
		for i := range 150 { // a scroll event every 16ms for 2.4s
			s.Set("c1", Anchor{Item: "m", Offset: float64(i)})
			keyedtest.Wait(16 * time.Millisecond)
		}
		keyedtest.Wait(time.Minute)
		var when []time.Duration
		for _, o := range f.Ops() {
			when = append(when, o.At)
		}
		// Max wait at 1s; the next Set at 1.008s starts a new window to
		// 2.008s; the last Set, at 2.384s, settles at 2.484s.
		assert.Equal(t, []time.Duration{time.Second, 2008 * time.Millisecond, 2484 * time.Millisecond}, when)
	})
}

// TestEvictionOrder: least recently set goes first; Get does not count as
// a set; the file lists places least recently set first.
func TestEvictionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		s := openFake(t, f, Options{Max: 3})
		for _, c := range []string{"a", "b", "c"} {
			s.Set(c, at(c))
		}
		s.Set("a", at("a2")) // a is now the most recent: order b, c, a
		_, _ = s.Get("b")    // reading does not refresh b
		s.Set("d", at("d"))  // evicts b
		require.NoError(t, s.Flush(t.Context()))
		s.Set("e", at("e")) // evicts c
		require.NoError(t, s.Flush(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 2)
		assert.Equal(t, []string{"c", "a", "d"}, ops[0].Value.chats())
		assert.Equal(t, []string{"a", "d", "e"}, ops[1].Value.chats())
		_, ok := s.Get("b")
		assert.False(t, ok, "b should be evicted")
		got, ok := s.Get("a")
		assert.True(t, ok)
		assert.Equal(t, "a2", got.Item)
		assert.Equal(t, 3, s.Len())
	})
}

func TestDefaultMax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openFake(t, newFake(fileData{}), Options{Max: -1})
		for i := range defaultMax + 10 {
			s.Set(string(rune(0x4e00+i)), at("x"))
		}
		assert.Equal(t, defaultMax, s.Len())
		_, ok := s.Get(string(rune(0x4e00 + 9)))
		assert.False(t, ok, "the tenth place set should be evicted")
		_, ok = s.Get(string(rune(0x4e00 + 10)))
		assert.True(t, ok, "the eleventh place set should be kept")
	})
}

func TestForgetAndRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("a"))
		s := openFake(t, f, Options{})
		s.Set("b", at("b"))
		require.NoError(t, s.Flush(t.Context()))
		s.Forget("a")
		s.Forget("nothing") // unknown after the read: no save
		require.NoError(t, s.Flush(t.Context()))
		s.Forget("b")
		require.NoError(t, s.Flush(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 3)
		assert.Equal(t, []string{"a", "b"}, ops[0].Value.chats())
		assert.Equal(t, []string{"b"}, ops[1].Value.chats())
		assert.True(t, ops[2].Remove, "no places left must remove the file")
	})
}

func TestCloseSavesThenStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		s := openFake(t, f, Options{})
		s.Set("a", at("a"))
		require.NoError(t, s.Close(t.Context()))
		require.Len(t, f.Ops(), 1, "Close must queue the pending Set")
		s.Set("a", at("after"))
		keyedtest.Wait(time.Minute)
		assert.Len(t, f.Ops(), 1, "saved after Close")
		got, _ := s.Get("a")
		assert.Equal(t, "after", got.Item)
		require.NoError(t, s.Close(t.Context()))
	})
}

func TestBadOffset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := openFake(t, newFake(fileData{}), Options{})
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			s.Set("a", Anchor{Item: "m", Offset: v})
			got, _ := s.Get("a")
			assert.Zero(t, got.Offset, "offset %v", v)
		}
	})
}

func TestLostSaveReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		f.SetSaveErr(statefile.ErrClosed)
		s := openFake(t, f, Options{})
		s.Set("a", at("a"))
		assert.ErrorIs(t, s.Flush(t.Context()), statefile.ErrClosed)
	})
}
