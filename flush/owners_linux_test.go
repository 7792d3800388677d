package flush_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/statefile"
)

// unwritable returns a directory and a function that makes new files in it
// fail, with the errno they fail with, and a function that undoes it. As
// root: a real tmpfs of 256 KiB, filled (ENOSPC). As a normal user, whom
// tmpmount cannot serve: the directory's write permission taken away
// (EACCES), which binds a normal user but not root.
func unwritable(t *testing.T) (dir string, block func(), unblock func(), errno syscall.Errno) {
	t.Helper()
	if os.Getuid() != 0 {
		dir = t.TempDir()
		block = func() { require.NoError(t, os.Chmod(dir, 0o500)) }
		unblock = func() { require.NoError(t, os.Chmod(dir, 0o700)) }
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		return dir, block, unblock, syscall.EACCES
	}
	dir = tmpmount.Tmpfs(t, "256k")
	filler := filepath.Join(dir, "filler")
	block = func() {
		f, err := os.Create(filler)
		require.NoError(t, err)
		defer f.Close()
		chunk := make([]byte, 4096)
		for err == nil {
			_, err = f.Write(chunk)
		}
		require.ErrorIs(t, err, syscall.ENOSPC, "filling the tmpfs")
	}
	unblock = func() { require.NoError(t, os.Remove(filler)) }
	return dir, block, unblock, syscall.ENOSPC
}

// TestQuitReportOwners: an app's hook holds the statefile Store ("state"),
// the drafts and anchors stores on it, and its agents. Only drafts.json's
// save fails (its disk is full, or not writable): every Run reports it
// under "drafts", once, and never under "state"; "anchors", whose file is
// on disk, drains. A failure of a file no item owns (settings.json) is
// "state"'s. Once the disk takes writes again the next Run drains all and
// drafts.json holds the draft.
func TestQuitReportOwners(t *testing.T) {
	dir, block, unblock, errno := unwritable(t)
	st := statefile.NewStore(statefile.Options{OnError: func(string, error) {}})
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	settings, err := statefile.Open[map[string]string](st, filepath.Join(dir, "settings.json"))
	require.NoError(t, err)
	d, err := drafts.OpenContext(t.Context(), st, filepath.Join(dir, "drafts.json"), drafts.Options{})
	require.NoError(t, err)
	places, err := anchors.OpenContext(t.Context(), st, filepath.Join(dir, "anchors.json"), anchors.Options{})
	require.NoError(t, err)
	hook := flush.New(5 * time.Second)
	hook.Add("state", st)
	hook.Add("drafts", d)
	hook.Add("anchors", places)
	hook.Add("agents", flush.Func(func(context.Context) error { return nil }))

	require.NoError(t, settings.Save(map[string]string{"theme": "dark"}))
	places.Set("chat-1", anchors.Anchor{Item: "msg-9"})
	require.True(t, hook.Run().Drained, "before the disk fills")
	block()
	text := strings.Repeat("typed while the disk was full ", 100)
	d.Set("chat-1", text)

	for i := range 5 { // the same each time, whatever ran first
		r := hook.Run()
		t.Logf("Run %d: %v", i, r)
		require.Len(t, r.Items, 4)
		assert.True(t, r.Items[0].Drained, "Run %d: state: got %v, want drained: drafts.json is the drafts item's", i, r.Items[0].Err)
		assert.False(t, r.Items[1].Drained, "Run %d: drafts: got drained while drafts.json is not on disk", i)
		assert.ErrorIs(t, r.Items[1].Err, errno, "Run %d: drafts' error", i)
		assert.True(t, r.Items[2].Drained, "Run %d: anchors: got %v", i, r.Items[2].Err)
		assert.True(t, r.Items[3].Drained, "Run %d: agents", i)
		assert.True(t, strings.HasPrefix(r.String(), "flush: drained 3/4 in "), "Run %d: %q", i, r)
		assert.NotContains(t, r.String(), "state: ", "Run %d: drafts.json reported twice", i)
	}
	_, err = os.Stat(filepath.Join(dir, "drafts.json"))
	require.True(t, errors.Is(err, fs.ErrNotExist), "drafts.json on a disk that takes no writes: %v", err)

	require.NoError(t, settings.Save(map[string]string{"theme": "light"}))
	r := hook.Run()
	assert.ErrorIs(t, r.Items[0].Err, errno, "state reports settings.json, which no other item owns: %v", r)
	assert.Contains(t, r.Items[0].Err.Error(), "settings.json")
	assert.NotContains(t, r.Items[0].Err.Error(), "drafts.json")

	unblock()
	r = hook.Run()
	assert.True(t, r.Drained, "once the disk takes writes: %v", r)
	again := statefile.NewStore(statefile.Options{})
	defer again.Close(context.Background())
	d2, err := drafts.OpenContext(t.Context(), again, filepath.Join(dir, "drafts.json"), drafts.Options{})
	require.NoError(t, err)
	got, _ := d2.Get("chat-1")
	assert.Equal(t, text, got.Text, "drafts.json after the Run that drained")
	require.NoError(t, d2.Close(t.Context()))
}
