package statefile_test

// The unchanged-save skip on a filesystem that caches attributes: a FUSE
// loopback served by a helper process (internal/fusemount) with go-fuse's
// usual 1 s entry and attribute timeouts, as a FUSE home or cloud drive
// runs. Another client (a write to the backing directory, as another NFS
// client's would be) replaces the file with bytes of the same size; an
// lstat through the mount keeps showing the Store's own write, but a save
// of the Store's last value must still write, and an Update must build on
// the other client's value.

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/reliability/internal/fusemount"
	"github.com/offmain/offmain/statefile"
)

func TestUnchangedSaveOnAttributeCache(t *testing.T) {
	lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
	tr := &statetest.Traces{}
	s := statefile.NewStore(statefile.Options{Trace: tr.Add})
	t.Cleanup(func() { s.Close(context.Background()) }) //nolint:errcheck // checked below
	f, err := statefile.Open[string](s, filepath.Join(lb.Dir(), "state.json"))
	require.NoError(t, err)
	save := func(v string) statefile.SaveTrace {
		t.Helper()
		require.NoError(t, f.Save(v))
		require.NoError(t, f.Flush(context.Background()))
		got := tr.Take()
		require.Len(t, got, 1, "statetest.Traces of one save")
		return got[0]
	}

	for i := range 3 { // each round another same-size replacement
		mine := `"mine"` + "\n"
		require.False(t, save("mine").Unchanged && i == 0, "the first save writes")
		before := stampOf(t, f.Path())
		replaceBacking(t, filepath.Join(lb.Backing(), "state.json"), `"them"`+"\n")
		if stampOf(t, f.Path()) == before {
			t.Logf("round %d: lstat through the mount still shows the Store's own write (the attribute cache)", i)
		}
		got := save("mine")
		assert.False(t, got.Unchanged, "round %d: the save of the last value was skipped over another client's bytes", i)
		assert.Equal(t, mine, string(statetest.ReadBytes(t, filepath.Join(lb.Backing(), "state.json"))),
			"round %d: the file holds what the last save left", i)
	}
	assert.True(t, save("mine").Unchanged, "a save of the bytes the file holds writes nothing")

	type tally struct {
		N int `json:"n"`
	}
	u, err := statefile.Open[tally](s, filepath.Join(lb.Dir(), "tally.json"))
	require.NoError(t, err)
	plus := func(c tally) (tally, error) { c.N++; return c, nil }
	require.NoError(t, u.Update(plus))
	require.NoError(t, u.Flush(context.Background()))
	replaceBacking(t, filepath.Join(lb.Backing(), "tally.json"), `{"n":5}`+"\n")
	require.NoError(t, u.Update(plus))
	require.NoError(t, u.Flush(context.Background()))
	assert.JSONEq(t, `{"n":6}`, string(statetest.ReadBytes(t, filepath.Join(lb.Backing(), "tally.json"))),
		"the Update built on the other client's value")
}

// stamp is what an lstat tells of a file version.
type stamp struct {
	ino, size    int64
	mtime, ctime int64
}

func stampOf(t *testing.T, path string) stamp {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return stamp{ino: int64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: st.Ctim.Nano()}
}

// replaceBacking replaces name in the backing directory, as another client
// of the filesystem does: a new file renamed over it.
func replaceBacking(t *testing.T, name, content string) {
	t.Helper()
	tmp := name + ".other"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, name))
}
