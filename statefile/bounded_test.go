package statefile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queuedReads returns how many Loads (and watch checks) wait in q.
func (q *queue) queuedReads() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.reads)
}

// A GUI that polls LoadContext with a short deadline while the disk hangs
// queues nothing: the read the disk holds runs on, and each abandoned
// Load is taken off the queue, so memory does not grow with the polls.
func TestAbandonedLoadsLeaveTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{})
		newFakeDisk(s, false)
		hang := make(chan struct{})
		s.hooks.readFile = func(string) ([]byte, error) { <-hang; return []byte("1\n"), nil }
		f, _ := Open[int](s, osPath("/state/f.json"))
		for range 1000 {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_, err := f.Load(ctx)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
		assert.Zero(t, f.q.queuedReads(), "reads queued after 1000 abandoned Loads")
		close(hang)
		v, err := f.Load(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 1, v, "a Load once the disk answers")
	})
}

// The sweep's listing of a directory keeps only what a sweep can use: a
// directory of thousands of names with no temp file leaves nothing held
// for the Store's life, and one with another path's leftover keeps that
// name and the names it could belong to, not the rest.
func TestSweepListingKeepsOnlyTempNames(t *testing.T) {
	dir := t.TempDir()
	for i := range 5000 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("download-%d.bin", i)), nil, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.json"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".other.json42"), nil, 0o600)) // a crash's, of a path never opened
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".state.json7"), nil, 0o600))
	s := NewStore(Options{})
	f, err := Open[int](s, filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	_, err = f.Load(context.Background()) // after the sweep
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, s.Close(context.Background()))
	assert.NoFileExists(t, filepath.Join(dir, ".state.json7"), "the path's leftover was swept")

	l := s.dirs[dir+string(filepath.Separator)]
	require.NotNil(t, l, "the directory's listing")
	l.mu.Lock()
	defer l.mu.Unlock()
	assert.Equal(t, map[string]bool{".other.json42": true}, l.temps, "temp names kept")
	assert.Equal(t, map[string][]string{"other.json": {"other.json"}}, l.siblings, "other names kept")
}

// A cycle of three writers, each inside a step whose callback Loads the
// next one's path, would wait for good: one of the three Loads returns
// errReentrant and the others complete.
func TestReentrantCycleOfThree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{MaxParallel: 3})
		newFakeDisk(s, false)
		paths := []string{osPath("/state/a.json"), osPath("/state/b.json"), osPath("/state/c.json")}
		files := make([]*File[hooked], len(paths))
		for i, p := range paths {
			files[i], _ = Open[hooked](s, p)
		}
		in := make(chan struct{})
		var inside sync.WaitGroup // all three writers are inside their steps
		inside.Add(len(files))
		errs := make([]error, len(files))
		for i, f := range files {
			next := files[(i+1)%len(files)]
			require.NoError(t, f.Save(hooked{N: 1, hook: func() {
				inside.Done()
				<-in
				_, errs[i] = next.Load(context.Background())
			}}))
		}
		inside.Wait()
		close(in)
		require.NoError(t, s.Flush(context.Background()))
		failed := 0
		for i, err := range errs {
			if err != nil {
				assert.ErrorIs(t, err, errReentrant, "Load %d", i)
				failed++
			}
		}
		assert.Equal(t, 1, failed, "Loads that returned errReentrant: got %v", errs)
	})
}
