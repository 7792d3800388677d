package flush_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
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
// save fails (its disk is full, or not writable): every Run's report names
// drafts.json once, on a line of its own, and says what failed; "anchors",
// whose file is on disk, drains. A failure of settings.json, which only
// "state" reports, is on a line of its own too. Once the disk takes writes
// again the next Run drains all and drafts.json holds the draft.
func TestQuitReportOwners(t *testing.T) {
	dir, block, unblock, errno := unwritable(t)
	st := statefile.NewStore(statefile.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	settings, err := statefile.Open[map[string]string](st, filepath.Join(dir, "settings.json"))
	require.NoError(t, err)
	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Load(t.Context()))
	places, err := anchors.Open(st, filepath.Join(dir, "anchors.json"), anchors.Options{})
	require.NoError(t, err)
	require.NoError(t, places.Load(t.Context()))
	hook := flush.New(flush.Options{Timeout: 5 * time.Second})
	hook.Add("state", st)
	hook.Add("drafts", d)
	hook.Add("anchors", places)
	hook.AddStop("agents", flush.Func(func(context.Context) error { return nil }))

	require.NoError(t, settings.Save(map[string]string{"theme": "dark"}))
	places.Set("chat-1", anchors.Anchor{Item: "msg-9"})
	require.True(t, hook.Run().Saved, "before the disk fills")
	block()
	text := strings.Repeat("typed while the disk was full ", 100)
	d.Set("chat-1", text)

	draftsPath := filepath.Join(dir, "drafts.json")
	for i := range 5 { // the same each time, whatever ran first
		r := hook.Run()
		t.Logf("Run %d: %v", i, r)
		require.Len(t, r.Items, 3, "Run's items: the savers")
		assert.False(t, r.Saved)
		assert.ErrorIs(t, r.Items[1].Err, errno, "Run %d: drafts' error", i)
		assert.NoError(t, r.Items[2].Err, "Run %d: anchors", i)
		lines := strings.Split(r.String(), "\n")
		require.Len(t, lines, 2, "Run %d: a summary and one line for drafts.json: %q", i, r)
		assert.True(t, strings.HasPrefix(lines[1], "  "+draftsPath+": save: "), "Run %d: %q", i, lines[1])
		assert.Equal(t, 1, strings.Count(r.String(), "drafts.json"), "Run %d: drafts.json once", i)
	}
	_, err = os.Stat(draftsPath)
	require.True(t, errors.Is(err, fs.ErrNotExist), "drafts.json on a disk that takes no writes: %v", err)

	require.NoError(t, settings.Save(map[string]string{"theme": "light"}))
	r := hook.Run()
	assert.ErrorIs(t, r.Items[0].Err, errno, "state reports settings.json: %v", r)
	assert.Equal(t, 1, strings.Count(r.String(), "settings.json"), "settings.json once: %q", r)
	assert.Equal(t, 1, strings.Count(r.String(), "drafts.json"), "drafts.json once: %q", r)

	unblock()
	r = hook.Run()
	assert.True(t, r.Saved, "once the disk takes writes: %v", r)
	again := statefile.NewStore(statefile.Options{})
	defer again.Close(context.Background())
	d2, err := drafts.Open(again, draftsPath, drafts.Options{})
	require.NoError(t, err)
	require.NoError(t, d2.Load(t.Context()))
	got, _ := d2.Get("chat-1")
	assert.Equal(t, text, got.Text, "drafts.json after the Run that drained")
	require.NoError(t, d2.Close(t.Context()))
}
