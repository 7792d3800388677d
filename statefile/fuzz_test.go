package statefile_test

// Case 5 of the reliability suite: arbitrary bytes as the content of a
// state file. Load never panics; it returns a value (exactly what
// encoding/json makes of the bytes) or an error matching ErrCorrupt, and
// then the bytes are kept aside, byte for byte, never deleted.
//
// go test runs the seeds below as ordinary tests; CI also fuzzes a little,
// with a count rather than a duration, since a -fuzztime duration can end
// in a spurious "context deadline exceeded" in Go 1.26 (go.dev/issue/75804):
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 10000x ./statefile/

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/statefile"
)

// fuzzDoc is a state file shaped like an app's: nested, with maps, slices,
// pointers and numbers of several kinds.
type fuzzDoc struct {
	Version int                `json:"version"`
	Title   string             `json:"title"`
	Ratio   float64            `json:"ratio"`
	Tabs    []fuzzTab          `json:"tabs"`
	Index   map[string]int64   `json:"index"`
	Open    *bool              `json:"open,omitempty"`
	Extra   map[string]any     `json:"extra,omitempty"`
	Bytes   []byte             `json:"bytes,omitempty"`
	Nested  map[string][]uint8 `json:"nested,omitempty"`
}

type fuzzTab struct {
	ID     uint32  `json:"id"`
	Offset float32 `json:"offset"`
	Text   string  `json:"text"`
}

var fuzzSeeds = []string{
	``,
	`null`,
	`{}`,
	`[]`,
	`""`,
	`0`,
	`{"version":1,"title":"t","ratio":0.5,"tabs":[{"id":1,"offset":2.5,"text":"hi"}],"index":{"a":1},"open":true}` + "\n",
	`{"version":1,"title":"t","tabs":[{"id":1,"offset":2.5,"text":"hi"}],"index":{"a":1}`, // torn
	`{"version":1e400}`,
	`{"version":-1,"tabs":[{"id":-1}]}`,
	`{"title":"\ud800","extra":{"k":[1,"2",null,{"x":{}}]}}`,
	`{"bytes":"AAEC","nested":{"a":"AQI="}}`,
	`{"bytes":"not base64!"}`,
	"\xef\xbb\xbf{}",
	"{\"title\":\"\xff\xfe\"}",
	`{"version":1} trailing`,
	`[1,2,3]`,
	`{"a":"b","a":"c"}`,
	`{"tabs":null,"index":null}`,
	"\x00\x00\x00\x00",
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	`"a string"`,
	`123456789012345678901234567890`,
	`["x", 1.5, true]`,
	`{"x":NaN}`,
}

// FuzzLoad feeds the bytes to Load as four types: a nested struct, a map,
// a slice and a number.
func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir() // one per fuzzing process: a directory per input is slow on ext4
	f.Fuzz(func(t *testing.T, data []byte) {
		s := statefile.NewStore(statefile.Options{Durability: statefile.Atomic})
		checkLoad[fuzzDoc](t, s, filepath.Join(dir, "doc.json"), data)
		checkLoad[map[string]any](t, s, filepath.Join(dir, "map.json"), data)
		checkLoad[[]string](t, s, filepath.Join(dir, "slice.json"), data)
		checkLoad[float64](t, s, filepath.Join(dir, "number.json"), data)
	})
}

// checkLoad writes data at path and loads it as a T through s.
func checkLoad[T any](t *testing.T, s *statefile.Store, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, data, 0o600))
	t.Cleanup(func() { removeAll(t, path) })
	file, err := statefile.Open[T](s, path)
	require.NoError(t, err)
	got, err := file.Load(context.Background())
	var want T
	wantErr := json.Unmarshal(data, &want)
	if len(data) == 0 {
		wantErr = errors.New("empty file")
	}
	if wantErr == nil {
		require.NoError(t, err, "got an error, want the value encoding/json decodes")
		assert.Equal(t, want, got)
		assert.Equal(t, data, statetest.ReadBytes(t, path), "Load left the file as it was")
		return
	}
	require.ErrorIs(t, err, statefile.ErrCorrupt, "got %v, want ErrCorrupt (json: %v)", err, wantErr)
	var zero T
	assert.Equal(t, zero, got, "got a value with ErrCorrupt, want the zero value")
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, path, ce.Path)
	require.NotEmpty(t, ce.Aside, "the bytes were not moved aside: %v", ce.Err)
	assert.Equal(t, filepath.Dir(path), filepath.Dir(ce.Aside), "kept beside the state file")
	assert.Equal(t, data, statetest.ReadBytes(t, ce.Aside), "the bytes kept aside, byte for byte")
	_, err = os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the corrupt file was moved, so the next save starts afresh")
}

// removeAll removes path and the copies of it kept aside.
func removeAll(t *testing.T, path string) {
	dir, base := filepath.Split(path)
	for _, name := range append(statetest.CorruptNames(t, dir, base), base) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Error(err)
		}
	}
}
