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

// A save of the bytes this Store last wrote, while the file still holds
// them, touches nothing: no new inode, no fsync, and its trace says
// Unchanged. Once someone else replaced the file with other bytes or
// removed it, or the value changed, the save writes again.
func TestUnchangedSaveSkipsDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	tr := &statetest.Traces{}
	s := statefile.NewStore(statefile.Options{Trace: tr.Add})
	defer s.Close(context.Background())
	f, err := statefile.Open[string](s, path)
	require.NoError(t, err)
	save := func(v string) statefile.SaveTrace {
		t.Helper()
		require.NoError(t, f.Save(v))
		require.NoError(t, f.Flush(context.Background()))
		got := tr.Take()
		require.Len(t, got, 1, "statetest.Traces of one save")
		return got[0]
	}
	inode := func() os.FileInfo {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi
	}

	first := save("a")
	require.False(t, first.Unchanged, "the first save writes")
	before := inode()
	again := save("a")
	assert.True(t, again.Unchanged, "the same bytes again: got a write")
	assert.Zero(t, again.Sync+again.DirSync+again.Write+again.Rename, "disk steps of an unchanged save: got %+v", again)
	assert.True(t, os.SameFile(before, inode()), "the unchanged save replaced the file")

	assert.False(t, save("b").Unchanged, "a new value writes")
	require.NoError(t, os.WriteFile(path+".x", []byte("\"c\"\n"), 0o600))
	require.NoError(t, os.Rename(path+".x", path)) // an editor saves other bytes of the same size
	assert.False(t, save("b").Unchanged, "after a replace by another program the save must write")
	require.NoError(t, os.WriteFile(path+".x", []byte("\"b\"\n"), 0o600))
	require.NoError(t, os.Rename(path+".x", path)) // an editor saves the same bytes
	assert.True(t, save("b").Unchanged, "the file holds the save's bytes: no write needed")
	require.NoError(t, os.Remove(path))
	assert.False(t, save("b").Unchanged, "after a remove by another program the save must write")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "\"b\"\n", string(data))
	require.NoError(t, f.Remove())
	require.NoError(t, f.Flush(context.Background()))
	tr.Take()
	assert.False(t, save("b").Unchanged, "after the Store's own Remove the save must write")
}
