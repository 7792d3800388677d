package mountinfo

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real file parses: "/" is mounted, and where cgroup2 is mounted, if
// anywhere, is a directory.
func TestRead(t *testing.T) {
	ms, err := Read()
	require.NoError(t, err)
	_, ok := Top(ms, "/")
	assert.True(t, ok, "no mount at /")
	if dir := Cgroup2(); dir != "" {
		st, err := os.Stat(dir)
		require.NoError(t, err)
		assert.True(t, st.IsDir())
	}
}
