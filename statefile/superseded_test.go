package statefile_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// The review's reproduction: save 1 fails (its directory is a file:
// ENOTDIR), the directory is fixed, save 2 lands. The failure went to
// OnError; Flush, and the quit hook's report, call the path drained, since
// its newest state is on disk. A failure of the newest save is still
// reported, by every Flush until a retry lands it.
func TestFlushFailureSupersededBySuccess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	require.NoError(t, os.WriteFile(dir, []byte("a file where the directory goes"), 0o600))
	path := filepath.Join(dir, "s.json")
	var mu sync.Mutex
	var reported []error
	s := statefile.NewStore(statefile.Options{OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})
	defer s.Close(context.Background())
	f, err := statefile.Open[int](s, path)
	require.NoError(t, err)

	require.NoError(t, f.Save(1))
	_, err = f.Load(context.Background()) // waits for save 1
	require.ErrorIs(t, err, syscall.ENOTDIR, "precondition: save 1 failed")
	require.NoError(t, os.Remove(dir))
	require.NoError(t, f.Save(2))
	v, err := f.Load(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, v, "precondition: save 2 landed")

	assert.NoError(t, f.Flush(context.Background()), "File.Flush after a superseded failure")
	assert.NoError(t, s.Flush(context.Background()), "Store.Flush after a superseded failure")
	hook := flush.New(flush.Options{Timeout: 10 * time.Second})
	hook.Add("state", s)
	rep := hook.Run()
	assert.True(t, rep.Saved, "the quit report: got %v, want drained", rep)
	mu.Lock()
	assert.Len(t, reported, 1, "OnError calls: got %v, want save 1's failure", reported)
	mu.Unlock()

	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.WriteFile(dir, nil, 0o600))
	require.NoError(t, f.Save(3)) // the newest save fails: that is not drained
	err = s.Flush(context.Background())
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, err, &nd)
	assert.ErrorIs(t, nd.Failed[path], syscall.ENOTDIR, "Failed: got %v", nd.Failed)
	assert.ErrorIs(t, s.Flush(context.Background()), syscall.ENOTDIR, "while the file lacks save 3, every Flush says so")
	require.NoError(t, os.Remove(dir))
	assert.NoError(t, s.Flush(context.Background()), "the Flush's retry lands save 3")
}
