package drafts

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

func openDisk(t *testing.T, st *statefile.Store, path string) *Store {
	t.Helper()
	s, err := openLoad(t.Context(), st, path, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.sched.Stop() })
	return s
}

// all returns every draft, for comparing two stores.
func all(s *Store) map[string]Draft {
	m := map[string]Draft{}
	for _, tab := range s.Tabs() {
		m[tab], _ = s.Get(tab)
	}
	return m
}

func fill(s *Store) {
	s.Set("chat-1", "hello, wor")
	s.Put("chat-2", Draft{Text: "see attached", Attachments: []string{"/home/u/a.png", "/home/u/b.txt"}})
	s.Put("chat-3", Draft{Attachments: []string{"/home/u/only.pdf"}})
	s.Set("chat-4", "gone soon")
	s.Set("chat-1", "hello, world ✓")
	s.Delete("chat-4")
}

// TestReadBack: a fresh Store over the same path reads back exactly what the
// last one saved.
func TestReadBack(t *testing.T) {
	for _, tt := range keyedtest.ReadBacks {
		t.Run(tt.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state", "drafts.json")
			st := keyedtest.NewStatefile(t)
			s := openDisk(t, st, path)
			fill(s)
			want := all(s)
			require.Len(t, want, 3)
			again := openDisk(t, tt.Finish(t, st, s), path)
			assert.Equal(t, want, all(again), "read back: got, want")
		})
	}
}

func TestLastDraftRemovesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	st := keyedtest.NewStatefile(t)
	s := openDisk(t, st, path)
	s.Set("a", "x")
	require.NoError(t, s.Flush(t.Context()))
	require.FileExists(t, path)
	s.Set("a", "")
	require.NoError(t, s.Flush(t.Context()))
	assert.NoFileExists(t, path, "the last draft gone must remove the file")
	again := openDisk(t, keyedtest.NewStatefile(t), path)
	assert.Empty(t, again.Tabs())
}

func TestCorruptFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "drafts.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"drafts":{"a":`), 0o600))
	st := keyedtest.NewStatefile(t)
	s, err := openLoad(t.Context(), st, path, Options{})
	require.NotNil(t, s, "Open must return a usable store")
	t.Cleanup(func() { s.sched.Stop() })
	assert.ErrorIs(t, err, statefile.ErrCorrupt)
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.FileExists(t, ce.Aside, "the bad bytes must be kept aside")
	assert.Empty(t, s.Tabs())

	s.Set("a", "fresh start")
	require.NoError(t, s.Flush(t.Context()))
	again := openDisk(t, keyedtest.NewStatefile(t), path)
	d, ok := again.Get("a")
	assert.True(t, ok)
	assert.Equal(t, "fresh start", d.Text)
}

func TestUnreadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	require.NoError(t, os.Mkdir(path, 0o700)) // reading it fails with EISDIR
	s, err := openLoad(t.Context(), keyedtest.NewStatefile(t), path, Options{})
	require.NotNil(t, s, "the Store works in memory")
	require.Error(t, err)
	assert.NotErrorIs(t, err, statefile.ErrCorrupt)
	assert.NotErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, err, s.Load(t.Context()), "every Load returns the read's error")
	s.Set("a", "typed")
	d, _ := s.Get("a")
	assert.Equal(t, "typed", d.Text, "memory still works")
	ferr := s.Close(t.Context())
	assert.ErrorIs(t, ferr, syscall.EISDIR, "Close says saves are off, and why")
	assert.Contains(t, ferr.Error(), "not saving")
	assert.DirExists(t, path, "what could not be read must be left alone")
}

func TestOpenClosedStatefile(t *testing.T) {
	st := statefile.NewStore(statefile.Options{})
	require.NoError(t, st.Close(t.Context()))
	_, err := openLoad(t.Context(), st, filepath.Join(t.TempDir(), "d.json"), Options{})
	assert.ErrorIs(t, err, statefile.ErrClosed)
}

func TestStatefileClosedUnderStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	st := statefile.NewStore(statefile.Options{})
	s := openDisk(t, st, path)
	require.NoError(t, st.Close(t.Context()))
	s.Set("a", "typed after the statefile.Store closed")
	err := s.Flush(t.Context())
	assert.ErrorIs(t, err, statefile.ErrClosed, "a save that could not be queued must be reported")
}

// TestConcurrentEditsWhileWriting runs edits from several goroutines while
// statefile's writer encodes the saved maps; -race fails if they share one.
func TestConcurrentEditsWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	st := statefile.NewStore(statefile.Options{Durability: statefile.Atomic})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	s, err := openLoad(t.Context(), st, path, Options{Settle: 1, MaxWait: 1}) // 1ns: save on every pause
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				tab := fmt.Sprintf("tab-%d", (g+i)%7)
				switch i % 5 {
				case 3:
					s.Delete(tab)
				case 4:
					s.Put(tab, Draft{Text: "p", Attachments: []string{fmt.Sprint(i)}})
				default:
					s.Set(tab, fmt.Sprintf("g%d i%d", g, i))
				}
				if i%50 == 0 {
					_ = s.Flush(t.Context())
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(t.Context()))
	again := openDisk(t, keyedtest.NewStatefile(t), path)
	assert.Equal(t, all(s), all(again), "file after the last save: got, want")
}
