package anchors

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// TestScrollBackWritesNothing: a scroll away and back to the saved place
// before the settle saves the bytes the file holds, which statefile does
// not write again; a place that changed is written.
func TestScrollBackWritesNothing(t *testing.T) {
	var mu sync.Mutex
	var got []bool // Unchanged, per save
	st := statefile.NewStore(statefile.Options{Trace: func(tr statefile.SaveTrace) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, tr.Unchanged)
	}})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	s := openDisk(t, st, filepath.Join(t.TempDir(), "anchors.json"), Options{})
	require.NoError(t, s.Load(t.Context()))
	settle := func() {
		t.Helper()
		require.True(t, s.sched.Flush(), "a save queued")
		require.NoError(t, s.Flush(t.Context()))
	}

	s.Set("c", Anchor{Item: "m1", Offset: 3})
	settle()
	s.Set("c", Anchor{Item: "m7", Offset: 40}) // scrolled away...
	s.Set("c", Anchor{Item: "m1", Offset: 3})  // ...and back
	settle()
	s.Set("c", Anchor{Item: "m2", Offset: 0})
	settle()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []bool{false, true, false}, got, "Unchanged per save: got, want")
}
