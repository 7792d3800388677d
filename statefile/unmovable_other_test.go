//go:build !windows

package statefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// unmovablePath returns a path that a rename cannot move: one under a
// regular file, which rename(2) answers with ENOTDIR.
func unmovablePath(t *testing.T) string {
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	return filepath.Join(notDir, "f.json")
}
