package keyedtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// KeptAside checks that a store's read reported a corrupt file (err
// matches statefile.ErrCorrupt) and that statefile moved its bytes, data,
// aside unchanged.
func KeptAside(t *testing.T, data []byte, err error) {
	t.Helper()
	require.ErrorIs(t, err, statefile.ErrCorrupt, "got %v, want ErrCorrupt", err)
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Aside, "the bytes were not moved aside: %v", ce.Err)
	got, rerr := os.ReadFile(ce.Aside)
	require.NoError(t, rerr)
	assert.Equal(t, data, got, "the bytes kept aside, byte for byte")
}

// RemoveAll removes path and the copies of it kept aside, so that a fuzz
// target can reuse one directory for every input (a directory per input is
// slow on ext4).
func RemoveAll(t *testing.T, path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == base || strings.HasPrefix(e.Name(), base+".corrupt-") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Error(err)
			}
		}
	}
}

// NewerThan reports whether data is a newer release's file for a format at
// version newest, as statefile's Migration documents it: a valid JSON
// object any of whose top-level members named "version", in any case,
// holds an integer above newest. It reads the members with encoding/json's
// own tokenizer, so a fuzz target checks statefile against it.
func NewerThan(data []byte, newest int) bool {
	if !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return false
		}
		var n int
		name, _ := tok.(string)
		if strings.EqualFold(name, "version") && json.Unmarshal(v, &n) == nil && string(v) != "null" && n > newest {
			return true
		}
	}
	return false
}
