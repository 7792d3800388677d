package statefile_test

// Case 2 of the reliability suite: a disk that is full. A real tmpfs of
// 64 KiB gives a real ENOSPC. A save that does not fit fails through
// OnError and Flush, the previous file stays whole and readable, no temp
// file is left, and once space is freed the next save succeeds.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/statefile"
)

func TestDiskFull(t *testing.T) {
	for _, d := range []statefile.Durability{statefile.Durable, statefile.Atomic} {
		t.Run(d.String(), func(t *testing.T) {
			t.Run("value larger than the disk", func(t *testing.T) {
				dir := tmpmount.Tmpfs(t, "64k")
				s, f, log := openFull(t, dir, d)
				expectRefused(t, s, f, log, syscall.ENOSPC, saveOf(f, strings.Repeat("x", 128<<10)))
				expectSaved(t, s, f, log, strings.Repeat("y", 16<<10))
			})
			t.Run("disk filled by another file", func(t *testing.T) {
				dir := tmpmount.Tmpfs(t, "64k")
				s, f, log := openFull(t, dir, d)
				filler := fill(t, dir)
				value := strings.Repeat("z", 16<<10)
				expectRefused(t, s, f, log, syscall.ENOSPC, saveOf(f, value))
				expectRefused(t, s, f, log, syscall.ENOSPC, saveOf(f, value)) // and again: nothing piles up
				require.NoError(t, os.Remove(filler))
				expectSaved(t, s, f, log, value)
			})
			t.Run("remove on a full disk", func(t *testing.T) {
				dir := tmpmount.Tmpfs(t, "64k")
				s, f, log := openFull(t, dir, d)
				fill(t, dir)
				require.NoError(t, f.Remove())
				require.NoError(t, s.Flush(t.Context()), "removing frees space: it must work on a full disk")
				assert.Empty(t, log.drain(), "OnError calls")
				_, err := os.Stat(f.Path())
				assert.ErrorIs(t, err, os.ErrNotExist)
			})
		})
	}
}

// openFull opens dir/state.json in a new Store and saves a first value,
// "the last good save".
func openFull(t *testing.T, dir string, d statefile.Durability) (*statefile.Store, *statefile.File[string], *errorLog) {
	t.Helper()
	log := newErrorLog()
	s := statefile.NewStore(statefile.Options{Durability: d, OnError: log.onError})
	t.Cleanup(func() { s.Close(context.Background()) }) //nolint:errcheck // the test checked each failure
	f, err := statefile.Open[string](s, filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	expectSaved(t, s, f, log, "the last good save")
	return s, f, log
}

func saveOf(f *statefile.File[string], v string) func() error {
	return func() error { return f.Save(v) }
}

// fill writes a file in dir until the filesystem is full, and returns its
// path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	file, err := os.Create(path)
	require.NoError(t, err)
	defer file.Close()
	chunk := make([]byte, 1024)
	for {
		if _, err = file.Write(chunk); err != nil {
			break
		}
	}
	require.True(t, errors.Is(err, syscall.ENOSPC), "filling %s: got %v, want ENOSPC", dir, err)
	return path
}
