package drafts_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/internal/keyedtest"
)

// A drafts file removed while the app runs (a person's rm, a cleaning
// tool) is written again by the next Flush: the quit's "saved" means the
// drafts are on disk, and the next start finds them.
func TestFlushRestoresRemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	st := keyedtest.NewStatefile(t)
	d, err := drafts.Open(st, path, drafts.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Load(t.Context()))
	d.Set("tab-1", "typed before the rm")
	require.NoError(t, d.Flush(t.Context()))
	require.NoError(t, os.Remove(path))

	require.NoError(t, d.Flush(t.Context()))
	require.FileExists(t, path)
	again, err := openLoad(t.Context(), keyedtest.NewStatefile(t), path, drafts.Options{})
	require.NoError(t, err)
	got, ok := again.Get("tab-1")
	assert.True(t, ok)
	assert.Equal(t, "typed before the rm", got.Text)
	require.NoError(t, again.Close(t.Context()))
	require.NoError(t, d.Close(t.Context()))
}
