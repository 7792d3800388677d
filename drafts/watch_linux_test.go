package drafts

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
	raw     chan map[string]string
	changes chan []string
}

// tapFile is the real file, with each delivery of its watch copied to raw.
type tapFile struct {
	*statefile.File[fileData]
	raw chan<- map[string]string
}

func (f tapFile) Watch(fn func(fileData, error)) (func(), error) {
	return f.File.Watch(func(data fileData, err error) {
		got := map[string]string{}
		for tab, d := range data.Drafts {
			got[tab] = d.Text
		}
		if err != nil {
			got = map[string]string{"error": err.Error()}
		}
		f.raw <- got
		fn(data, err)
	})
}

func openWindow(t *testing.T, path string) *window {
	t.Helper()
	st := statefile.NewStore(statefile.Options{})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	f, err := statefile.Open[fileData](st, path)
	require.NoError(t, err)
	w := &window{raw: make(chan map[string]string, 16), changes: make(chan []string, 16)}
	w.s, err = openSync(t.Context(), tapFile{f, w.raw}, Options{Watch: true, OnChange: func(tabs []string) { w.changes <- tabs }})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, w.s.Close(context.Background())) })
	return w
}

// TestTwoWindowsOnDisk: two windows over one drafts file, with real
// fsnotify events. Each save reaches the other window, which reports the
// changed tabs and returns the new text from Get; each window's watch
// delivers only the other's saves, exactly once each, and no merge answers
// with a save of its own (each raw delivery is checked in order, and none
// is left at the end).
func TestTwoWindowsOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	a, b := openWindow(t, path), openWindow(t, path)
	ctx := t.Context()

	a.s.Set("t1", "from A")
	require.NoError(t, a.s.Flush(ctx))
	assert.Equal(t, map[string]string{"t1": "from A"}, keyedtest.Next(t, b.raw, "delivery to B"))
	assert.Equal(t, []string{"t1"}, keyedtest.Next(t, b.changes, "OnChange in B"))
	got, _ := b.s.Get("t1")
	assert.Equal(t, "from A", got.Text, "B's Get after A's save")

	b.s.Set("t2", "from B")
	require.NoError(t, b.s.Flush(ctx))
	assert.Equal(t, map[string]string{"t1": "from A", "t2": "from B"}, keyedtest.Next(t, a.raw, "delivery to A"),
		"A's first delivery is B's save: A's own save was not echoed")
	assert.Equal(t, []string{"t2"}, keyedtest.Next(t, a.changes, "OnChange in A"))
	got, _ = a.s.Get("t2")
	assert.Equal(t, "from B", got.Text, "A's Get after B's save")

	a.s.Set("t2", "A edits B's tab") // the same tab, edited later: newest wins
	a.s.Delete("t1")                 // sent from A
	require.NoError(t, a.s.Flush(ctx))
	assert.Equal(t, map[string]string{"t2": "A edits B's tab"}, keyedtest.Next(t, b.raw, "delivery to B"))
	assert.Equal(t, []string{"t1", "t2"}, keyedtest.Next(t, b.changes, "OnChange in B"))
	got, _ = b.s.Get("t2")
	assert.Equal(t, "A edits B's tab", got.Text)
	_, ok := b.s.Get("t1")
	assert.False(t, ok, "A's delete reached B")

	b.s.Set("t3", "last") // the sentinel: A's next delivery must be this
	require.NoError(t, b.s.Flush(ctx))
	assert.Equal(t, map[string]string{"t2": "A edits B's tab", "t3": "last"}, keyedtest.Next(t, a.raw, "delivery to A"))
	assert.Equal(t, []string{"t3"}, keyedtest.Next(t, a.changes, "OnChange in A"))

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
	assert.Equal(t, map[string]string{"t2": "A edits B's tab", "t3": "last"}, file.texts(), "the file: got, want")
	assert.Contains(t, file.Deleted, "t1", "the file keeps t1's tombstone")
}

// TestCorruptFileOnDiskNotSavedOver: another program leaves bytes that do
// not parse. The watching window hears of it (a corrupt report, after
// statefile's wait for a slow writer), keeps its drafts, and neither saves
// over the bytes nor moves them; its next edit's save moves them aside
// before it writes, so nothing is lost.
func TestCorruptFileOnDiskNotSavedOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "drafts.json")
	w := openWindow(t, path)
	w.s.Set("t1", "mine")
	require.NoError(t, w.s.Flush(t.Context()))

	require.NoError(t, os.WriteFile(path, []byte(`{"drafts":`), 0o600))
	got := keyedtest.Next(t, w.raw, "the corrupt report")
	assert.Contains(t, got["error"], "left in place", "the delivery: got %v", got)
	require.NoError(t, w.s.Flush(t.Context()))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"drafts":`, string(raw), "the bytes another program left")
	d, _ := w.s.Get("t1")
	assert.Equal(t, "mine", d.Text, "memory kept")

	w.s.Set("t1", "mine, edited")
	require.NoError(t, w.s.Flush(t.Context()))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var aside []string
	for _, e := range entries {
		if e.Name() != "drafts.json" {
			aside = append(aside, e.Name())
		}
	}
	if assert.Len(t, aside, 1, "the edit's save moves the corrupt bytes aside first: %v", aside) {
		kept, err := os.ReadFile(filepath.Join(dir, aside[0]))
		require.NoError(t, err)
		assert.Equal(t, `{"drafts":`, string(kept))
	}
}
