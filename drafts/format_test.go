package drafts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/internal/keyedtest"
)

// The drafts of the example in the package documentation.
var exampleDrafts = map[string]drafts.Draft{
	"tab-1": {Text: "hello, wor", UpdatedAt: time.Date(2026, 3, 2, 9, 15, 4, 123456789, time.UTC)},
	"tab-2": {Text: "see attached", Attachments: []string{"/home/me/a.png"}, UpdatedAt: time.Date(2026, 3, 2, 9, 16, 0, 0, time.UTC)},
}

// TestFileFormat: a Store writes, byte for byte, the file the package
// documentation shows, and reads that file back.
func TestFileFormat(t *testing.T) {
	want := keyedtest.DocExample(t, "doc.go")

	t.Run("write", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "drafts.json")
		d, err := openLoad(t.Context(), keyedtest.NewStatefile(t), path, drafts.Options{MaxAge: -1})
		require.NoError(t, err)
		for tab, draft := range exampleDrafts {
			d.Put(tab, draft)
		}
		require.NoError(t, d.Close(t.Context()))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(want)+"\n", string(got), "file on disk: got, want the documented example")
	})

	t.Run("read", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "drafts.json")
		require.NoError(t, os.WriteFile(path, want, 0o600))
		d, err := openLoad(t.Context(), keyedtest.NewStatefile(t), path, drafts.Options{MaxAge: -1})
		require.NoError(t, err)
		defer d.Close(t.Context())
		for tab, draft := range exampleDrafts {
			got, ok := d.Get(tab)
			assert.True(t, ok, "Get(%q): got no draft, want one", tab)
			assert.Equal(t, draft, got, "Get(%q): got, want", tab)
		}
	})

	t.Run("tombstones", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "drafts.json")
		d, err := openLoad(t.Context(), keyedtest.NewStatefile(t), path, drafts.Options{Watch: true})
		require.NoError(t, err)
		d.Set("tab-1", "hello")
		d.Set("tab-3", "sent")
		d.Delete("tab-3")
		require.NoError(t, d.Close(t.Context()))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var file struct {
			Version int                        `json:"version"`
			Drafts  map[string]json.RawMessage `json:"drafts"`
			Deleted map[string]time.Time       `json:"deleted"`
		}
		require.NoError(t, json.Unmarshal(data, &file))
		assert.Equal(t, 1, file.Version, "version: got, want")
		assert.Contains(t, file.Drafts, "tab-1", "drafts: got, want tab-1")
		assert.NotContains(t, file.Drafts, "tab-3", "drafts: got, want no tab-3")
		assert.Contains(t, file.Deleted, "tab-3", `"deleted": got, want tab-3`)
	})
}
