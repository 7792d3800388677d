package drafts

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlushDuringClose: a Flush that runs while Close queues the last edit
// returns only after that edit is queued, so a quit hook's Flush racing the
// app's own Close never reports the file drained with the edit still in
// memory (and the process then exiting without it). The test holds mu to
// stop Close inside its save, before the edit reaches the file. It uses real
// goroutines: synctest cannot wait on a goroutine blocked on a sync.Mutex.
func TestFlushDuringClose(t *testing.T) {
	f := &fakeFile{Start: time.Now()}
	s, err := openSync(t.Context(), f, Options{})
	require.NoError(t, err)
	s.Set("a", "last words")

	s.mu.Lock()
	closed := make(chan error, 1)
	go func() { closed <- s.Close(t.Context()) }()
	for s.sched.Pending() { // until Close has taken the edit and waits for mu in save
		runtime.Gosched()
	}
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(t.Context()) }()
	for range 1000 { // time for a Flush that does not wait to reach the file
		if len(f.Flushes()) > 0 {
			break
		}
		runtime.Gosched()
	}
	s.mu.Unlock()
	require.NoError(t, <-closed)
	require.NoError(t, <-flushed)
	assert.Equal(t, []int{1, 1}, f.Flushes(),
		"saves queued at each file Flush: got, want the edit queued before both Flushes")
}
