package drafts

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// TestTypingFsyncs counts the fsyncs of a minute of typing on a real disk
// (Durable): 30 settles, one every 2 s; before every third one the person
// typed a character and took it back (a typo undone), so the draft is what
// the last save wrote. Those settles write nothing: 20 writes, 40 fsyncs
// (file and directory), where every settle used to write (30 writes, 60
// fsyncs). The figures are logged for RELIABILITY.md.
func TestTypingFsyncs(t *testing.T) {
	var mu sync.Mutex
	writes, fsyncs, unchanged := 0, 0, 0
	st := statefile.NewStore(statefile.Options{Trace: func(tr statefile.SaveTrace) {
		mu.Lock()
		defer mu.Unlock()
		if tr.Unchanged {
			unchanged++
		} else {
			writes++
		}
		for _, d := range []bool{tr.Sync > 0, tr.DirSync > 0} {
			if d {
				fsyncs++
			}
		}
	}})
	t.Cleanup(func() { assert.NoError(t, st.Close(context.Background())) })
	s, err := openLoad(t.Context(), st, filepath.Join(t.TempDir(), "drafts.json"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.sched.Stop() })

	const settles = 30
	var text strings.Builder
	for i := range settles {
		if i%3 == 2 {
			s.Set("tab", text.String()+"x") // a typo...
			s.Set("tab", text.String())     // ...taken back before the pause
		} else {
			text.WriteString("word ")
			s.Set("tab", text.String())
		}
		require.True(t, s.sched.Flush(), "settle %d queued no save", i)
		require.NoError(t, s.Flush(context.Background()))
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d settles: %d writes, %d fsyncs, %d unchanged", settles, writes, fsyncs, unchanged)
	assert.Equal(t, 20, writes, "writes: got, want one per settle that changed the draft")
	if runtime.GOOS != "windows" {
		assert.Equal(t, 40, fsyncs, "fsyncs: got, want two per write (file, directory)")
	}
	// On Windows the trace cannot count them: there is no directory fsync,
	// and the monotonic clock moves in timer ticks (runtime.nanotime1 reads
	// INTERRUPT_TIME), so a small file's fsync often measures 0.
}
