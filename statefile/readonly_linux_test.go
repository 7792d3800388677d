package statefile_test

// Case 3 of the reliability suite: a read-only filesystem (EROFS), as a
// remount of a tmpfs and as a read-only bind of a directory on the real
// disk, and a directory the process cannot write. Root passes permission
// bits, so the unwritable directory is made with the immutable attribute,
// which binds root too (EPERM; see internal/tmpmount). The promises are
// those of a full disk, and a corrupt file that cannot be moved aside is
// left where it is, never deleted.

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/statefile"
)

func TestReadOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string // the directory to make read-only
		set  func(t testing.TB, dir string, on bool)
		want error
	}{
		{"tmpfs remounted read-only", tmpfsDir, tmpmount.SetReadOnly, syscall.EROFS},
		{"directory bound read-only", func(t *testing.T) string { return t.TempDir() }, tmpmount.SetReadOnly, syscall.EROFS},
		{"immutable directory", tmpfsDir, tmpmount.SetImmutable, fs.ErrPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			s, f, log := statetest.OpenFull(t, dir, statefile.Durable)
			tc.set(t, dir, true)
			statetest.ExpectRefused(t, s, f, log, tc.want, statetest.SaveOf(f, "while read-only"))
			statetest.ExpectRefused(t, s, f, log, tc.want, f.Remove)

			// A path whose directory is missing: making the directory fails.
			deep, err := statefile.Open[string](s, filepath.Join(dir, "sub", "state.json"))
			require.NoError(t, err)
			statetest.ExpectRefused(t, s, deep, log, tc.want, statetest.SaveOf(deep, "nowhere to go"))

			tc.set(t, dir, false)
			statetest.ExpectSaved(t, s, f, log, "writable again")
			statetest.ExpectSaved(t, s, deep, log, "and here too")
		})
	}
}

// A corrupt file in a directory that cannot be written cannot be moved
// aside: Load reports it (ErrCorrupt, no Aside) and leaves its bytes in
// place, also for the next Load. Once the directory is writable again,
// the bytes must still be kept: moved aside by the next Load, and not
// overwritten by the next save.
func TestReadOnlyCorruptFileKept(t *testing.T) {
	for _, set := range []struct {
		name string
		fn   func(t testing.TB, dir string, on bool)
	}{
		{"read-only", tmpmount.SetReadOnly},
		{"immutable", tmpmount.SetImmutable},
	} {
		t.Run(set.name+", then a load", func(t *testing.T) {
			dir, s, f := openCorruptUnwritable(t, set.fn)
			_, err := f.Load(context.Background())
			var ce *statefile.CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "{torn", string(statetest.ReadBytes(t, ce.Aside)), "moved aside once it could be")
			assert.Equal(t, []string{filepath.Base(ce.Aside)}, statetest.DirEntries(t, dir))
			require.NoError(t, s.Close(t.Context()))
		})
		t.Run(set.name+", then a save", func(t *testing.T) {
			dir, s, f := openCorruptUnwritable(t, set.fn)
			require.NoError(t, f.Save(map[string]int{"new": 1}))
			require.NoError(t, s.Close(t.Context()))
			aside := statetest.CorruptNames(t, dir, "state.json")
			if assert.Len(t, aside, 1, "the corrupt bytes were not kept: the save replaced them (dir: %v)", statetest.DirEntries(t, dir)) {
				assert.Equal(t, "{torn", string(statetest.ReadBytes(t, filepath.Join(dir, aside[0]))))
			}
		})
	}
}

// openCorruptUnwritable puts a corrupt state file in a directory made
// unwritable by set, loads it twice, and makes the directory writable.
func openCorruptUnwritable(t *testing.T, set func(t testing.TB, dir string, on bool)) (string, *statefile.Store, *statefile.File[map[string]int]) {
	t.Helper()
	dir := tmpfsDir(t)
	path := filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(path, []byte("{torn"), 0o600))
	s := statefile.NewStore(statefile.Options{})
	f, err := statefile.Open[map[string]int](s, path)
	require.NoError(t, err)
	set(t, dir, true)
	for range 2 {
		_, err = f.Load(context.Background())
		require.ErrorIs(t, err, statefile.ErrCorrupt)
		var ce *statefile.CorruptError
		require.ErrorAs(t, err, &ce)
		assert.Empty(t, ce.Aside, "nowhere to move it")
		assert.Error(t, ce.AsideErr, "AsideErr says why the bytes stayed")
		assert.NotContains(t, err.Error(), "\n", "the error's text is one line")
		assert.Contains(t, err.Error(), "left in place (moving it aside failed: ", "the text says the bytes stayed")
		assert.Equal(t, "{torn", string(statetest.ReadBytes(t, path)), "the bytes stay in place")
	}
	set(t, dir, false)
	return dir, s, f
}

func tmpfsDir(t *testing.T) string { return tmpmount.Tmpfs(t, "1m") }
