package anchors

// Case 5 of the reliability suite (RELIABILITY.md): arbitrary bytes as the
// anchors file. Open and the read never panic; the read returns nil and
// the Store holds places from the file (each one a place the file lists
// for that chat, never more than Max), or, for a file that does not
// parse, an error matching statefile.ErrCorrupt with the bytes kept aside,
// byte for byte, and an empty Store. Either way the Store then saves.
//
// go test runs the seeds as ordinary tests; CI also fuzzes a little (a
// count, not a duration: go.dev/issue/75804):
//
//	go test -run '^$' -fuzz '^FuzzOpen$' -fuzztime 2000x ./anchors/

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

// fuzzMax is small so that files with more chats exercise eviction.
const fuzzMax = 4

var fuzzOpenSeeds = []string{
	``,
	`null`,
	`{}`,
	`{"version":1,"anchors":[]}`,
	`{"version":1,"anchors":[{"chat":"c1","item":"m9","offset":12.5,"updated_at":"2026-01-02T03:04:05Z"}]}` + "\n",
	`{"version":1,"anchors":[{"chat":"a","item":"1"},{"chat":"b","item":"2"},{"chat":"c","item":"3"},{"chat":"d","item":"4"},{"chat":"e","item":"5"},{"chat":"f","item":"6"}]}`,
	`{"version":1,"anchors":[{"chat":"a","item":"first"},{"chat":"a","item":"second"}]}`,
	`{"version":1,"anchors":[{"chat":"c1","item":"m9","offset":1e400}]}`,
	`{"version":1,"anchors":[{"chat":"c1","item":"torn`,
	`{"anchors":null}`,
	`{"anchors":{}}`,
	`{"anchors":[null,{}]}`,
	`{"anchors":[{"chat":"","offset":-0}]}`,
	`[]`,
	"\xef\xbb\xbf{}",
	"{\"anchors\":[{\"chat\":\"\xff\"}]}",
	`{"version":1} []`,
	"\x00",
	// The version as encoding/json reads it: any case, the last one.
	`{"VERSION":2,"anchors":null}`,
	`{"version":1,"version":2}`,
	`{"version":2,"version":null}`,
	`{"version":2,"Version":1}`,
	`{"version":2,"anchors":5}`,
}

func FuzzOpen(f *testing.F) {
	for _, s := range fuzzOpenSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir() // one per fuzzing process: a directory per input is slow on ext4
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "anchors.json")
		t.Cleanup(func() { keyedtest.RemoveAll(t, path) })
		require.NoError(t, os.WriteFile(path, data, 0o600))
		st := statefile.NewStore(statefile.Options{Durability: statefile.Atomic})
		defer st.Close(context.Background()) //nolint:errcheck // checked by the Closes below

		s, err := Open(st, path, Options{Max: fuzzMax})
		require.NoError(t, err, "Open does not read the file")
		err = s.Load(context.Background())
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
			fuzzCheckHolds(t, s, want.Anchors)
		} else {
			keyedtest.KeptAside(t, data, err)
			assert.Zero(t, s.Len(), "a Store over a corrupt file starts empty")
		}

		s.Set("fuzz", Anchor{Item: "scrolled after the open", Offset: 1})
		require.NoError(t, s.Close(context.Background()), "the Store saves")
		again, err := Open(st, path, Options{Max: fuzzMax})
		require.NoError(t, err)
		a, ok := getWait(t, again, "fuzz")
		assert.True(t, ok && a.Item == "scrolled after the open", "read back: got %+v, %t", a, ok)
		require.NoError(t, again.Close(context.Background()))
	})
}

// fuzzCheckHolds checks that s holds as many places as the file has
// distinct chats, up to Max, each one a place the file lists for its chat.
func fuzzCheckHolds(t *testing.T, s *Store, recs []record) {
	t.Helper()
	listed := map[string][]Anchor{}
	for _, r := range recs {
		listed[r.Chat] = append(listed[r.Chat], r.Anchor)
	}
	assert.Equal(t, min(len(listed), fuzzMax), s.Len(), "places held")
	for chat, as := range listed {
		got, ok := s.Get(chat)
		if !ok {
			continue // evicted
		}
		found := false
		for _, a := range as {
			found = found || (a.Item == got.Item && a.Offset == got.Offset && a.UpdatedAt.Equal(got.UpdatedAt))
		}
		assert.True(t, found, "%q: got %+v, want one of %+v", chat, got, as)
	}
}
