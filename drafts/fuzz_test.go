package drafts

// Case 5 of the reliability suite (RELIABILITY.md): arbitrary bytes as the
// drafts file. Open never panics; it returns a usable Store holding what
// encoding/json makes of the file, or, for a file that does not parse, an
// empty usable Store and an error matching statefile.ErrCorrupt, with the
// bytes kept aside, byte for byte. Either way the Store then saves.
//
// go test runs the seeds as ordinary tests; CI also fuzzes a little (a
// count, not a duration: go.dev/issue/75804):
//
//	go test -run '^$' -fuzz '^FuzzOpen$' -fuzztime 2000x ./drafts/

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

var fuzzOpenSeeds = []string{
	``,
	`null`,
	`{}`,
	`{"version":1,"drafts":{}}`,
	`{"version":1,"drafts":{"t1":{"text":"hello","updated_at":"2026-01-02T03:04:05Z"}}}` + "\n",
	`{"version":1,"drafts":{"t1":{"text":"a","attachments":["/x","/y"],"updated_at":"2026-01-02T03:04:05+01:00"}}}`,
	`{"version":1,"drafts":{"t1":{"text":"","updated_at":"2026-01-02T03:04:05Z"},"t2":{"text":"kept"}}}`,
	`{"version":1,"drafts":{"t1":{"text":"torn`,
	`{"version":2,"drafts":null}`,
	`{"drafts":{"t":{"updated_at":"yesterday"}}}`,
	`{"drafts":{"t":{"text":1}}}`,
	`{"drafts":[]}`,
	`[]`,
	"\xef\xbb\xbf{}",
	"{\"drafts\":{\"\xff\":{\"text\":\"\xfe\"}}}",
	`{"version":1} {}`,
	"\x00",
	// The version as encoding/json reads it: any case, the last one.
	`{"VERSION":2,"drafts":null}`,
	`{"version":1,"version":2}`,
	`{"version":2,"version":null}`,
	`{"version":2,"Version":1}`,
	`{"version":2,"drafts":5}`,
}

func FuzzOpen(f *testing.F) {
	for _, s := range fuzzOpenSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir() // one per fuzzing process: a directory per input is slow on ext4
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "drafts.json")
		t.Cleanup(func() { keyedtest.RemoveAll(t, path) })
		require.NoError(t, os.WriteFile(path, data, 0o600))
		st := statefile.NewStore(statefile.Options{Durability: statefile.Atomic})
		defer st.Close(context.Background()) //nolint:errcheck // checked by the Flushes below

		s, err := openLoad(t.Context(), st, path, Options{MaxAge: -1}) // no expiry: what is read is what is kept
		require.NotNil(t, s, "Open returned no Store (err %v)", err)
		var want fileData
		if keyedtest.NewerThan(data, fileVersion) {
			// Written by a newer release: refused, and never saved over.
			require.ErrorIs(t, err, statefile.ErrNewerVersion)
			_ = s.Close(context.Background())
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, data, got, "a newer file must be left untouched")
			return
		}
		if jerr := json.Unmarshal(data, &want); jerr == nil && len(data) > 0 {
			require.NoError(t, err, "the file decodes as JSON")
			fuzzCheckHolds(t, s, want.Drafts)
		} else {
			keyedtest.KeptAside(t, data, err)
			assert.Empty(t, s.Tabs(), "a Store over a corrupt file starts empty")
		}

		s.Set("fuzz", "typed after the open")
		require.NoError(t, s.Close(context.Background()), "the Store saves")
		again, err := openLoad(t.Context(), st, path, Options{MaxAge: -1})
		require.NoError(t, err)
		d, ok := again.Get("fuzz")
		assert.True(t, ok && d.Text == "typed after the open", "read back: got %+v, %t", d, ok)
		require.NoError(t, again.Close(context.Background()))
	})
}

// fuzzCheckHolds checks that s holds exactly the non-empty drafts of want.
func fuzzCheckHolds(t *testing.T, s *Store, want map[string]Draft) {
	t.Helper()
	maps.DeleteFunc(want, func(_ string, d Draft) bool { return d.empty() })
	assert.Equal(t, slices.Sorted(maps.Keys(want)), s.Tabs())
	for tab, w := range want {
		got, ok := s.Get(tab)
		assert.True(t, ok, tab)
		assert.Equal(t, w.Text, got.Text, tab)
		assert.Equal(t, len(w.Attachments), len(got.Attachments), tab)
		assert.True(t, w.UpdatedAt.Equal(got.UpdatedAt), "%s: got %v, want %v", tab, got.UpdatedAt, w.UpdatedAt)
	}
}
