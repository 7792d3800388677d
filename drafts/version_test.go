package drafts_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/statefile"
)

// TestNewerFileNeverSavedOver: a file a newer release wrote (a higher
// "version", a field this release does not know) is refused, and edits stay
// in memory: going back to an older release must not destroy it.
func TestNewerFileNeverSavedOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	newer := []byte(`{"version":2,"drafts":{"a":{"text":"hi","updated_at":"2026-01-01T00:00:00Z"}},"future":true}`)
	require.NoError(t, os.WriteFile(path, newer, 0o600))
	st := statefile.NewStore(statefile.Options{})
	defer st.Close(context.Background())
	d, err := openLoad(context.Background(), st, path, drafts.Options{})
	require.NotNil(t, d)
	assert.ErrorIs(t, err, statefile.ErrNewerVersion)
	d.Set("b", "typed in the older release")
	assert.Error(t, d.Flush(context.Background()), "a Flush must say the edit was not saved")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(newer), string(got), "the newer file: got %s, want it untouched", got)
}
