//go:build windows

package statefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// unmovablePath returns a path that a rename cannot move: a file another
// handle holds open without FILE_SHARE_DELETE, which MoveFileEx answers
// with ERROR_SHARING_VIOLATION. A path under a regular file, as on Unix,
// is ERROR_PATH_NOT_FOUND here: a file that is gone, not one that stays.
func unmovablePath(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "f.json")
	require.NoError(t, os.WriteFile(path, []byte("{torn"), 0o600))
	holdExclusive(t, path)
	return path
}
