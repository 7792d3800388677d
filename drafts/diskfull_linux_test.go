package drafts_test

// A drafts store on a real tmpfs that fills up: its saves fail with
// ENOSPC, and its Flush says so each time; once space is freed, its Flush
// writes drafts.json, without a new edit and without timers of its own
// (statefile retries the failed save).

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/statefile"
)

func TestFlushAfterDiskFreed(t *testing.T) {
	dir := tmpmount.Tmpfs(t, "64k")
	path := filepath.Join(dir, "drafts.json")
	st := statefile.NewStore(statefile.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { st.Close(context.Background()) }) //nolint:errcheck // checked below
	s, err := openLoad(t.Context(), st, path, drafts.Options{})
	require.NoError(t, err)
	filler := fillDisk(t, dir)
	text := strings.Repeat("what the user typed ", 500)
	s.Set("chat-1", text)
	for i := range 2 {
		err := s.Flush(t.Context())
		assert.ErrorIs(t, err, syscall.ENOSPC, "Flush %d on a full disk: got %v", i, err)
	}
	assert.NoFileExists(t, path)

	require.NoError(t, os.Remove(filler))
	require.NoError(t, s.Flush(t.Context()), "Flush once space is back")
	require.FileExists(t, path)
	require.NoError(t, s.Flush(t.Context()), "a second Flush")
	require.NoError(t, s.Close(t.Context()))

	again, err := openLoad(t.Context(), statefile.NewStore(statefile.Options{}), path, drafts.Options{})
	require.NoError(t, err)
	d, ok := again.Get("chat-1")
	assert.True(t, ok && d.Text == text, "the draft read back from drafts.json: got %q", d.Text)
	require.NoError(t, again.Close(t.Context()))
}

// fillDisk writes a file in dir until the filesystem is full, and returns
// its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 1024)
	for err == nil {
		_, err = f.Write(chunk)
	}
	require.True(t, errors.Is(err, syscall.ENOSPC), "filling %s: got %v, want ENOSPC", dir, err)
	return path
}
