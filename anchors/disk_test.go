package anchors

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

func openDisk(t *testing.T, st *statefile.Store, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(st, path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.sched.Stop() })
	return s
}

// places returns every place in least-recently-set order, reading the file
// first if needed.
func places(t *testing.T, s *Store) []record {
	t.Helper()
	require.NoError(t, s.Load(t.Context()))
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record
	for e := s.lru.Front(); e != nil; e = e.Next() {
		out = append(out, *e.Value.(*record))
	}
	return out
}

func TestReadBack(t *testing.T) {
	for _, tt := range keyedtest.ReadBacks {
		t.Run(tt.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state", "anchors.json")
			st := keyedtest.NewStatefile(t)
			s := openDisk(t, st, path, Options{Max: 4})
			for i := range 6 {
				s.Set(fmt.Sprintf("chat-%d", i), Anchor{Item: fmt.Sprintf("msg-%d", i*10), Offset: float64(i) / 3})
			}
			s.Set("chat-3", Anchor{Item: "msg-31", Offset: -12.25})
			s.Forget("chat-4")
			want := places(t, s)
			require.Len(t, want, 3)
			again := openDisk(t, tt.Finish(t, st, s), path, Options{Max: 4})
			got, ok := getWait(t, again, "chat-3") // waits for the file's read
			assert.True(t, ok)
			assert.Equal(t, "msg-31", got.Item)
			assert.Equal(t, want, places(t, again), "read back: got, want")
		})
	}
}

// TestNeverMoreThanMaxOnDisk reads the raw file.
func TestNeverMoreThanMaxOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchors.json")
	s := openDisk(t, keyedtest.NewStatefile(t), path, Options{Max: 5})
	for i := range 40 {
		s.Set(fmt.Sprintf("c%02d", i), Anchor{Item: "m"})
		if i%7 == 0 {
			require.NoError(t, s.Flush(t.Context()))
			assert.LessOrEqual(t, len(readRaw(t, path).Anchors), 5)
		}
	}
	require.NoError(t, s.Flush(t.Context()))
	raw := readRaw(t, path)
	assert.Equal(t, 1, raw.Version)
	var chats []string
	for _, r := range raw.Anchors {
		chats = append(chats, r.Chat)
	}
	assert.Equal(t, []string{"c35", "c36", "c37", "c38", "c39"}, chats, "the file: least recently set first")

	// A smaller Max at the next start trims the file at its first read.
	s2 := openDisk(t, keyedtest.NewStatefile(t), path, Options{Max: 2})
	require.NoError(t, s2.Load(t.Context()))
	require.NoError(t, s2.Flush(t.Context()))
	assert.Len(t, readRaw(t, path).Anchors, 2)
}

func readRaw(t *testing.T, path string) fileData {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var d fileData
	require.NoError(t, json.Unmarshal(b, &d))
	return d
}

func TestCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchors.json")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	s := openDisk(t, keyedtest.NewStatefile(t), path, Options{})
	s.Set("a", Anchor{Item: "m1"}) // before the read: kept
	err := s.Load(t.Context())
	assert.ErrorIs(t, err, statefile.ErrCorrupt)
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.FileExists(t, ce.Aside, "the bad bytes must be kept aside")
	require.NoError(t, s.Flush(t.Context()))
	again := openDisk(t, keyedtest.NewStatefile(t), path, Options{})
	got, ok := getWait(t, again, "a")
	assert.True(t, ok)
	assert.Equal(t, "m1", got.Item)
	assert.NoError(t, again.Load(t.Context()))
}

func TestUnreadableFileNotOverwritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchors.json")
	require.NoError(t, os.Mkdir(path, 0o700)) // reading fails with EISDIR
	s := openDisk(t, keyedtest.NewStatefile(t), path, Options{})
	s.Set("a", Anchor{Item: "m"})
	assert.Error(t, s.Flush(t.Context()))
	assert.DirExists(t, path)
}

// TestConcurrentSetsWhileWriting: -race fails if the Store and statefile's
// writer share the saved slice.
func TestConcurrentSetsWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchors.json")
	st := statefile.NewStore(statefile.Options{Durability: statefile.Atomic})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	s, err := Open(st, path, Options{Max: 20, Settle: 1, MaxWait: 1}) // 1ns: save on every pause
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				chat := fmt.Sprintf("c%d", (g*7+i)%31)
				if i%9 == 0 {
					s.Forget(chat)
				} else {
					s.Set(chat, Anchor{Item: fmt.Sprint(i), Offset: float64(g)})
				}
				if i%40 == 0 {
					_, _ = s.Get(chat)
					_ = s.Flush(t.Context())
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Close(t.Context()))
	again := openDisk(t, keyedtest.NewStatefile(t), path, Options{Max: 20})
	assert.Equal(t, places(t, s), places(t, again))
}
