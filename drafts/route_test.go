package drafts_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/statefile"
)

// What the read met reaches the statefile Store's OnError, the one route
// an app shows failures by, once for a run of failures: here a directory
// stands where the file should be (EISDIR for root too).
func TestReadFailureReachesOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drafts.json")
	require.NoError(t, os.Mkdir(path, 0o700))
	got := make(chan error, 8)
	st := statefile.NewStore(statefile.Options{OnError: func(err error) { got <- err }})
	t.Cleanup(func() { st.Close(t.Context()) })
	d, err := drafts.Open(st, path, drafts.Options{})
	require.NoError(t, err)
	loadErr := d.Load(t.Context())
	require.Error(t, loadErr)
	select {
	case err := <-got:
		assert.ErrorContains(t, err, path)
		assert.Equal(t, loadErr.Error(), err.Error(), "OnError gets what Load returns")
	case <-time.After(10 * time.Second):
		t.Fatal("OnError did not hear of the read's failure within 10 s")
	}
	require.NoError(t, d.Close(t.Context()))
}
