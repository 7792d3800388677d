package anchors

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

// window is one window of the app: its own statefile.Store, as a second
// process would have, and a watching Store over the shared path. raw gets
// every change statefile delivers to the watch (so an echo of the window's
// own save would show), changes every OnChange.
type window struct {
	s       *Store
	raw     chan []string // chat=item of each place delivered
	changes chan []string
}

// tapFile is the real file, with each delivery of its watch copied to raw.
type tapFile struct {
	*statefile.File[fileData]
	raw chan<- []string
}

func (f tapFile) Watch(fn func(fileData, error)) (func(), error) {
	return f.File.Watch(func(data fileData, err error) {
		got := data.items()
		if err != nil {
			got = []string{"error: " + err.Error()}
		}
		f.raw <- got
		fn(data, err)
	})
}

// openWindow opens a watching Store and reads the file, which starts the
// watch.
func openWindow(t *testing.T, path string) *window {
	t.Helper()
	st := statefile.NewStore(statefile.Options{})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	f, err := statefile.Open[fileData](st, path)
	require.NoError(t, err)
	w := &window{raw: make(chan []string, 16), changes: make(chan []string, 16)}
	w.s = open(tapFile{f, w.raw}, Options{Watch: true, OnChange: func(chats []string) { w.changes <- chats }}, nil)
	t.Cleanup(func() { assert.NoError(t, w.s.Close(context.Background())) })
	require.NoError(t, w.s.Load(t.Context()))
	return w
}

// TestTwoWindowsOnDisk: two windows over one anchors file, with real
// fsnotify events. Each save reaches the other window, which reports the
// changed chats and returns the new place from Get; each window's watch
// delivers only the other's saves, exactly once each, and no merge answers
// with a save of its own (each raw delivery is checked in order, and none
// is left at the end).
func TestTwoWindowsOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchors.json")
	a, b := openWindow(t, path), openWindow(t, path)
	ctx := t.Context()

	a.s.Set("c1", Anchor{Item: "m1", Offset: 12})
	require.NoError(t, a.s.Flush(ctx))
	assert.Equal(t, []string{"c1=m1"}, keyedtest.Next(t, b.raw, "delivery to B"))
	assert.Equal(t, []string{"c1"}, keyedtest.Next(t, b.changes, "OnChange in B"))
	got, _ := b.s.Get("c1")
	assert.Equal(t, Anchor{Item: "m1", Offset: 12}, Anchor{Item: got.Item, Offset: got.Offset}, "B's Get after A's save")

	b.s.Set("c2", Anchor{Item: "m2"})
	require.NoError(t, b.s.Flush(ctx))
	assert.Equal(t, []string{"c1=m1", "c2=m2"}, keyedtest.Next(t, a.raw, "delivery to A"),
		"A's first delivery is B's save: A's own save was not echoed")
	assert.Equal(t, []string{"c2"}, keyedtest.Next(t, a.changes, "OnChange in A"))
	got, _ = a.s.Get("c2")
	assert.Equal(t, "m2", got.Item, "A's Get after B's save")

	a.s.Set("c2", Anchor{Item: "m2-scrolled-in-A"}) // the same chat, set later: newest wins
	a.s.Forget("c1")                                // the chat was deleted in A
	require.NoError(t, a.s.Flush(ctx))
	assert.Equal(t, []string{"c2=m2-scrolled-in-A"}, keyedtest.Next(t, b.raw, "delivery to B"))
	assert.Equal(t, []string{"c1", "c2"}, keyedtest.Next(t, b.changes, "OnChange in B"))
	got, _ = b.s.Get("c2")
	assert.Equal(t, "m2-scrolled-in-A", got.Item)
	_, ok := b.s.Get("c1")
	assert.False(t, ok, "A's Forget reached B")

	b.s.Set("c3", Anchor{Item: "last"}) // the sentinel: A's next delivery must be this
	require.NoError(t, b.s.Flush(ctx))
	assert.Equal(t, []string{"c2=m2-scrolled-in-A", "c3=last"}, keyedtest.Next(t, a.raw, "delivery to A"))
	assert.Equal(t, []string{"c3"}, keyedtest.Next(t, a.changes, "OnChange in A"))

	require.NoError(t, a.s.Close(ctx))
	require.NoError(t, b.s.Close(ctx))
	assert.Empty(t, a.raw, "extra deliveries to A")
	assert.Empty(t, b.raw, "extra deliveries to B")
	assert.Empty(t, a.changes, "extra OnChange in A")
	assert.Empty(t, b.changes, "extra OnChange in B")

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var file fileData
	require.NoError(t, json.Unmarshal(raw, &file))
	assert.Equal(t, []string{"c2=m2-scrolled-in-A", "c3=last"}, file.items(), "the file: got, want")
	assert.Contains(t, file.Forgotten, "c1", "the file keeps c1's tombstone")
}
