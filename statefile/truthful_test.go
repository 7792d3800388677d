package statefile_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/statefile"
)

// A Flush's nil means the file holds the newest state: a file removed
// from outside since the Store saved it is written again, by the next
// Flush and by Close. Bytes left there that do not parse (a torn copy, a
// sync client's half-written file) are moved aside first, as a Load moves
// them, and OnError names where they went.
func TestFlushRestoresFileChangedOutside(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte // what is left at the path; nil: the file is removed
	}{
		{"removed", nil},
		{"truncated", []byte{}},
		{"garbage", []byte("\"mi")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "settings.json")
			change := func() {
				if tc.bytes == nil {
					require.NoError(t, os.Remove(path))
					return
				}
				require.NoError(t, os.WriteFile(path, tc.bytes, 0o600))
			}
			var traces statetest.Traces
			log := statetest.NewErrorLog()
			s := statefile.NewStore(statefile.Options{Trace: traces.Add, OnError: log.OnError})
			f, err := statefile.Open[string](s, path)
			require.NoError(t, err)
			require.NoError(t, f.Save("mine"))
			require.NoError(t, f.Flush(t.Context()))
			traces.Take()

			change()
			require.NoError(t, s.Flush(t.Context()), "Flush: the file is written again")
			assert.Equal(t, "\"mine\"\n", string(statetest.ReadBytes(t, path)))
			assert.Len(t, traces.Take(), 1, "writes: the restore")
			expectAside(t, log, dir, tc.bytes)

			require.NoError(t, f.Flush(t.Context()))
			assert.Empty(t, traces.Take(), "a file that holds the save is not written again")
			change()
			require.NoError(t, s.Close(t.Context()), "Close restores it too")
			assert.Equal(t, "\"mine\"\n", string(statetest.ReadBytes(t, path)))
			expectAside(t, log, dir, tc.bytes)
		})
	}
}

// expectAside checks what OnError heard of a restore over bytes (nil: of
// a removed file): nothing, or a *CorruptError naming the copy beside the
// path that holds those bytes.
func expectAside(t *testing.T, log *statetest.ErrorLog, dir string, bytes []byte) {
	t.Helper()
	got := log.Drain()
	if bytes == nil {
		assert.Empty(t, got, "OnError, for a removed file")
		return
	}
	require.Len(t, got, 1, "OnError, for unparsable bytes")
	var ce *statefile.CorruptError
	require.ErrorAs(t, got[0].Err, &ce)
	require.NotEmpty(t, ce.Aside, "moved aside: %v", ce)
	assert.Equal(t, dir, filepath.Dir(ce.Aside), "beside the path")
	assert.Equal(t, bytes, statetest.ReadBytes(t, ce.Aside), "the copy holds the bytes found")
}

// A file another program saved over the Store's save is theirs, whether
// this Store read it since or not: last writer wins, and a Flush does not
// put back the older save. Nor does it for a path that a watch follows, or
// followed: a change from outside is news for the app to answer, also once
// the watch is stopped, and also at Close.
func TestFlushLeavesOthersFiles(t *testing.T) {
	for _, read := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "settings.json")
		var traces statetest.Traces
		s := statefile.NewStore(statefile.Options{Trace: traces.Add})
		f, err := statefile.Open[string](s, path)
		require.NoError(t, err)
		require.NoError(t, f.Save("mine"))
		require.NoError(t, f.Flush(t.Context()))
		traces.Take()
		require.NoError(t, os.WriteFile(path, []byte("\"theirs\"\n"), 0o600))
		if read {
			v, err := f.Load(t.Context())
			require.NoError(t, err)
			require.Equal(t, "theirs", v)
		}
		require.NoError(t, f.Flush(t.Context()))
		require.NoError(t, s.Close(t.Context()))
		assert.Equal(t, "\"theirs\"\n", string(statetest.ReadBytes(t, path)), "read by the Store first: %v", read)
		assert.Empty(t, traces.Take(), "writes, read first: %v", read)
	}

	for _, change := range [][]byte{nil, []byte("\"theirs\"\n"), []byte("{torn")} {
		path := filepath.Join(t.TempDir(), "w.json")
		s := statefile.NewStore(statefile.Options{Logger: slog.New(slog.DiscardHandler)})
		w, err := statefile.Open[string](s, path)
		require.NoError(t, err)
		require.NoError(t, w.Save("mine"))
		require.NoError(t, w.Flush(t.Context()))
		changes := make(chan error, 4)
		stop, err := w.Watch(func(_ string, err error) { changes <- err })
		require.NoError(t, err)
		stop()
		if change == nil {
			require.NoError(t, os.Remove(path))
		} else {
			require.NoError(t, os.WriteFile(path, change, 0o600))
		}
		require.NoError(t, s.Flush(t.Context()))
		require.NoError(t, s.Close(t.Context()))
		if change == nil {
			assert.NoFileExists(t, path, "a path watched once is the app's to answer")
		} else {
			assert.Equal(t, change, statetest.ReadBytes(t, path), "a path watched once is the app's to answer")
		}
	}
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
