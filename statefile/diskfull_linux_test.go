package statefile_test

// Case 2 of the reliability suite: a disk that is full. A real tmpfs of
// 64 KiB gives a real ENOSPC. A save that does not fit fails through
// OnError and Flush, the previous file stays whole and readable, no temp
// file is left, and once space is freed the next save succeeds.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/statefile"
)

func TestDiskFull(t *testing.T) {
	for _, d := range []statefile.Durability{statefile.Durable, statefile.Atomic} {
		t.Run(d.String(), func(t *testing.T) {
			t.Run("value larger than the disk", func(t *testing.T) {
				dir := tmpmount.Tmpfs(t, "64k")
				s, f, log := statetest.OpenFull(t, dir, d)
				statetest.ExpectRefused(t, s, f, log, syscall.ENOSPC, statetest.SaveOf(f, strings.Repeat("x", 128<<10)))
				statetest.ExpectSaved(t, s, f, log, strings.Repeat("y", 16<<10))
			})
			t.Run("disk filled by another file", func(t *testing.T) {
				dir := tmpmount.Tmpfs(t, "64k")
				s, f, log := statetest.OpenFull(t, dir, d)
				filler := fill(t, dir)
				value := strings.Repeat("z", 16<<10)
				statetest.ExpectRefused(t, s, f, log, syscall.ENOSPC, statetest.SaveOf(f, value))
				statetest.ExpectRefused(t, s, f, log, syscall.ENOSPC, statetest.SaveOf(f, value)) // and again: nothing piles up
				require.NoError(t, os.Remove(filler))
				statetest.ExpectSaved(t, s, f, log, value)
			})
			t.Run("remove on a full disk", func(t *testing.T) {
				dir := tmpmount.Tmpfs(t, "64k")
				s, f, log := statetest.OpenFull(t, dir, d)
				fill(t, dir)
				require.NoError(t, f.Remove())
				require.NoError(t, s.Flush(t.Context()), "removing frees space: it must work on a full disk")
				assert.Empty(t, log.Drain(), "OnError calls")
				_, err := os.Stat(f.Path())
				assert.ErrorIs(t, err, os.ErrNotExist)
			})
		})
	}
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
