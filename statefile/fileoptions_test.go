package statefile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type prefs struct {
	Theme string            `json:"theme"`
	Panes map[string]string `json:"panes"`
}

func defaultPrefs() prefs { return prefs{Theme: "light", Panes: map[string]string{"left": "chats"}} }

// Default gives the value of a missing or empty file, with no error, and
// leaves an empty file in place; without Default both stay as before.
func TestDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content *string // nil: no file
		def     bool
		want    prefs
		wantErr error
	}{
		{name: "missing", def: true, want: defaultPrefs()},
		{name: "empty", content: new(""), def: true, want: defaultPrefs()},
		{name: "present", content: new(`{"theme":"dark"}`), def: true, want: prefs{Theme: "dark"}},
		{name: "missing without default", wantErr: fs.ErrNotExist},
		{name: "empty without default", content: new(""), wantErr: ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prefs.json")
			if tc.content != nil {
				require.NoError(t, os.WriteFile(path, []byte(*tc.content), 0o600))
			}
			var opts FileOptions[prefs]
			if tc.def {
				opts.Default = defaultPrefs
			}
			s := NewStore(Options{})
			t.Cleanup(func() { s.Close(context.Background()) })
			f, err := OpenWith(s, path, opts)
			require.NoError(t, err)
			got, err := f.Load(context.Background())
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
				assert.Equal(t, prefs{}, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if tc.content != nil {
				assert.Equal(t, *tc.content, readFileT(t, path), "the file must be left as it was")
			}
		})
	}
}

// Each Load gets its own default: changing one does not change the next.
func TestDefaultNotShared(t *testing.T) {
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, filepath.Join(t.TempDir(), "p.json"), FileOptions[prefs]{Default: defaultPrefs})
	require.NoError(t, err)
	a, err := f.Load(context.Background())
	require.NoError(t, err)
	a.Panes["left"] = "changed"
	b, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "chats", b.Panes["left"])
}

// OnCorrupt's value replaces a corrupt file once its bytes are aside: Load
// returns it, the path holds it, and the bytes are in the corrupt copy.
func TestOnCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prefs.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"theme":`), 0o600))
	var got *CorruptError
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[prefs]{OnCorrupt: func(err *CorruptError) (prefs, error) {
		got = err
		return prefs{Theme: "rebuilt"}, nil
	}})
	require.NoError(t, err)
	v, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, prefs{Theme: "rebuilt"}, v)
	require.NotNil(t, got, "OnCorrupt was not called")
	assert.Equal(t, `{"theme":`, readFileT(t, got.Aside), "the corrupt bytes, aside")
	assert.JSONEq(t, `{"theme":"rebuilt","panes":null}`, readFileT(t, path), "the replacement on disk")
}

// An OnCorrupt error: Load reports both errors, writes nothing.
func TestOnCorruptError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prefs.json")
	require.NoError(t, os.WriteFile(path, []byte(`nope`), 0o600))
	noSource := errors.New("no other source")
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[prefs]{OnCorrupt: func(*CorruptError) (prefs, error) {
		return prefs{Theme: "x"}, noSource
	}})
	require.NoError(t, err)
	v, err := f.Load(context.Background())
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorIs(t, err, noSource)
	assert.Equal(t, prefs{}, v)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, fs.ErrNotExist, "nothing may be written when OnCorrupt fails")
}

// The first OpenWith fixes a path's options; a second OpenWith and a plain
// Open share them (drafts and anchors reopen their file on one Store).
func TestOpenWithTwice(t *testing.T) {
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	path := filepath.Join(t.TempDir(), "p.json")
	_, err := OpenWith(s, path, FileOptions[prefs]{Default: defaultPrefs})
	require.NoError(t, err)
	again, err := OpenWith(s, path, FileOptions[prefs]{})
	require.NoError(t, err, "a second OpenWith of the path")
	v, err := again.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, defaultPrefs(), v, "a second OpenWith shares the first one's options")
	f, err := Open[prefs](s, path)
	require.NoError(t, err)
	v, err = f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, defaultPrefs(), v, "a later Open shares the options")
}
