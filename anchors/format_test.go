package anchors_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/internal/keyedtest"
)

// The places of the example in the package documentation, least recently
// set first.
var examplePlaces = []struct {
	chat string
	a    anchors.Anchor
}{
	{"chat-1", anchors.Anchor{Item: "msg-9", Offset: 12.5, UpdatedAt: time.Date(2026, 3, 2, 9, 15, 4, 123456789, time.UTC)}},
	{"chat-2", anchors.Anchor{Item: "msg-120", Offset: 0, UpdatedAt: time.Date(2026, 3, 2, 9, 16, 0, 0, time.UTC)}},
}

// TestFileFormat: a Store writes, byte for byte, the file the package
// documentation shows, and reads that file back.
func TestFileFormat(t *testing.T) {
	want := keyedtest.DocExample(t, "doc.go")

	t.Run("write", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "anchors.json")
		s, err := anchors.Open(keyedtest.NewStatefile(t), path, anchors.Options{})
		require.NoError(t, err)
		for _, p := range examplePlaces {
			s.Set(p.chat, p.a)
		}
		require.NoError(t, s.Close(t.Context()))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(want)+"\n", string(got), "file on disk: got, want the documented example")
	})

	t.Run("read", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "anchors.json")
		require.NoError(t, os.WriteFile(path, want, 0o600))
		s, err := anchors.Open(keyedtest.NewStatefile(t), path, anchors.Options{Max: 1})
		require.NoError(t, err)
		defer s.Close(t.Context())
		require.NoError(t, s.Load(t.Context()))
		// Max 1 keeps the most recently set place: the file's last.
		_, ok := s.Get(examplePlaces[0].chat)
		assert.False(t, ok, "Get(%q) with Max 1: got a place, want it evicted", examplePlaces[0].chat)
		last := examplePlaces[len(examplePlaces)-1]
		got, ok := s.Get(last.chat)
		assert.True(t, ok, "Get(%q): got no place, want one", last.chat)
		assert.Equal(t, last.a, got, "Get(%q): got, want", last.chat)
	})

	t.Run("tombstones", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "anchors.json")
		s, err := anchors.Open(keyedtest.NewStatefile(t), path, anchors.Options{Watch: true})
		require.NoError(t, err)
		s.Set("chat-1", anchors.Anchor{Item: "msg-1"})
		s.Forget("chat-3")
		require.NoError(t, s.Close(t.Context()))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var file struct {
			Version   int                  `json:"version"`
			Anchors   []json.RawMessage    `json:"anchors"`
			Forgotten map[string]time.Time `json:"forgotten"`
		}
		require.NoError(t, json.Unmarshal(data, &file))
		assert.Equal(t, 1, file.Version, "version: got, want")
		assert.Len(t, file.Anchors, 1, "anchors: got, want chat-1 only")
		assert.Contains(t, file.Forgotten, "chat-3", `"forgotten": got, want chat-3`)
	})
}
