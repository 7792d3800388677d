package statefile

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The interleaving the review saw in 2 of about 25 -race runs, forced: a
// second Store's sweep runs right after a save created its temp file and
// before the save claimed it. The sweep must leave the file alone, and the
// save must land at its first try.
func TestSweepBetweenCreateAndClaim(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	var fails atomic.Int32
	writer := NewStore(Options{Durability: Atomic, OnError: func(error) { fails.Add(1) }})
	sweeper := NewStore(Options{})
	created := 0
	writer.hooks.tempCreated = func(name string) {
		created++
		sweeper.sweepTemps(path) // another Store's first Open of a path in dir
		assert.FileExists(t, name, "the sweep took a temp file between its creation and its claim")
	}
	f, err := Open[int](writer, path)
	require.NoError(t, err)
	require.NoError(t, f.Save(1))
	assert.NoError(t, f.Flush(context.Background()))
	assert.Equal(t, 1, created, "temp files made for one save")
	assert.Zero(t, fails.Load(), "failed saves")
	require.NoError(t, writer.Close(context.Background()))
	require.NoError(t, sweeper.Close(context.Background()))
	assert.Equal(t, "1\n", readFileT(t, path))
}

// Two Stores share a directory: one saves a path over and over while the
// other opens fresh paths there, each Open sweeping the directory. No save
// may fail.
func TestSweepStressTwoStores(t *testing.T) {
	dir := t.TempDir()
	var fails atomic.Int32
	var firstErr atomic.Value
	onErr := func(err error) {
		fails.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	writer := NewStore(Options{Durability: Atomic, OnError: onErr})
	opener := NewStore(Options{Durability: Atomic, OnError: onErr})
	f, err := Open[int](writer, filepath.Join(dir, "busy.json"))
	require.NoError(t, err)
	const saves, opens = 1500, 3000
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range saves {
			f.Save(i)
			if i%2 == 0 {
				f.Flush(context.Background()) // errors counted by OnError
			}
		}
	})
	wg.Go(func() {
		for i := range opens {
			_, err := Open[int](opener, filepath.Join(dir, fmt.Sprintf("fresh%d.json", i)))
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	require.NoError(t, writer.Close(context.Background()))
	require.NoError(t, opener.Close(context.Background()))
	assert.Zero(t, fails.Load(), "failed saves: got %d, want 0 (first: %v)", fails.Load(), firstErr.Load())
	assert.Equal(t, fmt.Sprintf("%d\n", saves-1), readFileT(t, filepath.Join(dir, "busy.json")))
}
