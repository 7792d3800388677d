package statefile_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/statefile"
)

// A Flush's nil means the file holds the newest state: a file removed or
// replaced from outside since the Store saved it is written again, by the
// next Flush and by Close.
func TestFlushRestoresFileChangedOutside(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"removed", func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) }},
		{"replaced", func(t *testing.T, path string) { require.NoError(t, os.WriteFile(path, []byte("\"theirs\"\n"), 0o600)) }},
		{"truncated", func(t *testing.T, path string) { require.NoError(t, os.Truncate(path, 0)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			var traces statetest.Traces
			s := statefile.NewStore(statefile.Options{Trace: traces.Add})
			f, err := statefile.Open[string](s, path)
			require.NoError(t, err)
			require.NoError(t, f.Save("mine"))
			require.NoError(t, f.Flush(t.Context()))
			traces.Take()

			tc.change(t, path)
			require.NoError(t, s.Flush(t.Context()), "Flush: the file is written again")
			assert.Equal(t, "\"mine\"\n", string(statetest.ReadBytes(t, path)))
			tr := traces.Take()
			require.Len(t, tr, 1, "writes: the restore")
			assert.True(t, tr[0].Retry, "the restore is traced as a retry of the last save")

			require.NoError(t, f.Flush(t.Context()))
			assert.Empty(t, traces.Take(), "a file that holds the save is not written again")
			tc.change(t, path)
			require.NoError(t, s.Close(t.Context()), "Close restores it too")
			assert.Equal(t, "\"mine\"\n", string(statetest.ReadBytes(t, path)))
		})
	}
}

// A file someone else wrote after this Store read it is theirs: a Flush
// does not put back the Store's older save. Nor does it for a path that a
// watch follows: the change is news for the app.
func TestFlushLeavesOthersFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	s := statefile.NewStore(statefile.Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := statefile.Open[string](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save("mine"))
	require.NoError(t, f.Flush(t.Context()))
	require.NoError(t, os.WriteFile(path, []byte("\"theirs\"\n"), 0o600))
	v, err := f.Load(t.Context())
	require.NoError(t, err)
	require.Equal(t, "theirs", v)
	require.NoError(t, f.Flush(t.Context()))
	assert.Equal(t, "\"theirs\"\n", string(statetest.ReadBytes(t, path)), "read since: not put back")

	watched := filepath.Join(t.TempDir(), "w.json")
	w, err := statefile.Open[string](s, watched)
	require.NoError(t, err)
	require.NoError(t, w.Save("mine"))
	require.NoError(t, w.Flush(t.Context()))
	changes := make(chan error, 4)
	stop, err := w.Watch(func(_ string, err error) { changes <- err })
	require.NoError(t, err)
	defer stop()
	require.NoError(t, os.Remove(watched))
	assert.ErrorIs(t, <-changes, os.ErrNotExist, "the watch reports the removal")
	require.NoError(t, s.Flush(t.Context()))
	assert.NoFileExists(t, watched, "a watched path is the watch's to answer")
}

// A save of the bytes the file already holds writes nothing, also when
// this Store has only read the file, not written it: the first Update of a
// run that sets what the file says costs no write and no fsync, and works
// in a directory the app cannot write.
func TestUnchangedAfterRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "window.json")
	type window struct{ W, H int }
	require.NoError(t, os.WriteFile(path, []byte("{\"W\":800,\"H\":600}\n"), 0o600))
	var traces statetest.Traces
	s := statefile.NewStore(statefile.Options{Trace: traces.Add})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := statefile.Open[window](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Update(func(w window) (window, error) { w.W, w.H = 800, 600; return w, nil }))
	require.NoError(t, f.Flush(t.Context()))
	tr := traces.Take()
	require.Len(t, tr, 1)
	assert.True(t, tr[0].Unchanged, "an Update to the values the file holds: %+v", tr[0])
	assert.Zero(t, tr[0].Sync+tr[0].DirSync, "no fsync")

	_, err = f.Load(t.Context())
	require.NoError(t, err)
	require.NoError(t, f.Save(window{800, 600}))
	require.NoError(t, f.Flush(t.Context()))
	tr = traces.Take()
	require.Len(t, tr, 1)
	assert.True(t, tr[0].Unchanged, "a Save, after a Load, of what the file holds")
}
