package statefile_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/statefile"
)

// TestNoFlockFilesystem: on a FUSE mount that refuses flock(2) with ENOLCK
// or EOPNOTSUPP, as some SMB, NFS and 9p mounts do, saves work, and a
// first Open's sweep leaves a temp-shaped file alone, since it cannot tell
// a live writer's from a crash's. Once locks work again, the sweep takes
// the leftover.
func TestNoFlockFilesystem(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOLCK, syscall.EOPNOTSUPP} {
		t.Run(errno.Error(), func(t *testing.T) {
			fsys := faultfs.MountLocksT(t)
			path := filepath.Join(fsys.Dir(), "s.json")
			leftover := filepath.Join(fsys.Dir(), ".s.json123")
			require.NoError(t, os.WriteFile(leftover, []byte("a temp file"), 0o600))
			clear := fsys.Fail(faultfs.Lock, errno, nil)

			s := statefile.NewStore(statefile.Options{})
			f, err := statefile.Open[int](s, path)
			require.NoError(t, err)
			for i := range 5 {
				require.NoError(t, f.Save(i))
				assert.NoError(t, f.Flush(context.Background()), "save %d without locks", i)
			}
			v, err := f.Load(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 4, v)
			require.NoError(t, s.Close(context.Background()))
			assert.FileExists(t, leftover, "the sweep removed a temp file it could not lock")
			assert.Equal(t, []string{".s.json123", "s.json"}, names(t, fsys.Dir()), "files: got, want no temp file of ours left")

			clear()
			s2 := statefile.NewStore(statefile.Options{})
			f2, err := statefile.Open[int](s2, path)
			require.NoError(t, err)
			_, err = f2.Load(context.Background()) // behind the sweep
			require.NoError(t, err)
			require.NoError(t, s2.Close(context.Background()))
			assert.NoFileExists(t, leftover, "with locks, the sweep takes a dead temp file")
		})
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
