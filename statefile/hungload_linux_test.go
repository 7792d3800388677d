package statefile

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/faultfs"
)

// A GUI polling LoadContext on a hanging disk (internal/faultfs, served by
// a helper process: the close(2) of the file's read blocks in the FUSE
// daemon) queues nothing beyond the read the disk holds: each Load that
// gives up leaves the queue. Once the disk answers, a Load works.
func TestHungDiskPolledLoads(t *testing.T) {
	fsys := faultfs.MountT(t)
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) }) //nolint:errcheck // checked below
	f, err := Open[string](s, filepath.Join(fsys.Dir(), "state.json"))
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
	_, err = f.LoadContext(first)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	<-h.Blocked() // the writer is inside the read's close(2)

	const polls = 500
	for range polls {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
		_, err := f.LoadContext(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "a Load on the hung disk")
	}
	assert.Zero(t, f.q.queuedReads(), "reads queued after %d polls on the hung disk", polls)

	h.Release()
	released = true
	v, err := f.Load()
	require.NoError(t, err)
	assert.Equal(t, "before the hang", v)
	require.NoError(t, s.Close(context.Background()))
}
