package statefile_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/statefile"
)

// A GUI polling LoadContext on a hanging disk (faultfs, served by a helper
// process: the close(2) of the file's read blocks in the FUSE daemon) gets
// each poll back by its deadline, and once the disk answers, a Load works.
// That the abandoned polls leave the queue is statefile's own
// TestAbandonedLoadsLeaveTheQueue, which can see the queue.
func TestHungDiskPolledLoads(t *testing.T) {
	fsys := faultfs.MountT(t)
	s := statefile.NewStore(statefile.Options{})
	t.Cleanup(func() { s.Close(context.Background()) }) //nolint:errcheck // checked below
	f, err := statefile.Open[string](s, filepath.Join(fsys.Dir(), "state.json"))
	require.NoError(t, err)
	require.NoError(t, f.Save("before the hang"))
	require.NoError(t, f.Flush(context.Background()))

	h := fsys.Hang(faultfs.Close, faultfs.Base("state.json"))
	released := false
	defer func() {
		if !released {
			h.Release()
		}
	}()
	first, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = f.Load(first)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	<-h.Blocked() // the writer is inside the read's close(2)

	const polls = 500
	for range polls {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
		_, err := f.Load(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "a Load on the hung disk")
	}

	h.Release()
	released = true
	v, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "before the hang", v)
	require.NoError(t, s.Close(context.Background()))
}
