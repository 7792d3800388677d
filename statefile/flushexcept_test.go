package statefile

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A quit report that flushes drafts.json through its drafts store and the
// rest of the Store with FlushExcept reports each failure once, under its
// owner: FlushExcept neither waits for nor reports the excepted paths
// (named as to Open: after Abs and Clean), and File.Flush reports its own
// path's failure whenever its newest state is not on disk, however many
// Flushes saw it first.
func TestFlushExceptAndFileFlushAttribution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(Options{OnError: func(string, error) {}})
		d := newFakeDisk(s, false)
		errDrafts := errors.New("drafts.json: disk says no")
		var mu sync.Mutex
		failDrafts := true
		commit := s.commit
		s.commit = func(path string, data []byte, tr *SaveTrace) error {
			mu.Lock()
			fail := failDrafts && path == osPath("/state/drafts.json")
			mu.Unlock()
			if fail {
				return errDrafts
			}
			return commit(path, data, tr)
		}
		state, _ := Open[int](s, osPath("/state/state.json"))
		drafts, _ := Open[int](s, osPath("/state/drafts.json"))
		require.NoError(t, state.Save(1))
		require.NoError(t, drafts.Save(1))

		for _, except := range []string{osPath("/state/drafts.json"), osPath("/state/../state/./drafts.json"), osPath("/state//drafts.json")} {
			assert.NoError(t, s.FlushExcept(context.Background(), except), "FlushExcept(%q)", except)
		}
		assert.ErrorIs(t, s.Flush(context.Background()), errDrafts, "Store.Flush reports it")
		for i := range 2 {
			assert.ErrorIs(t, drafts.Flush(context.Background()), errDrafts, "File.Flush %d after Store.Flush saw it", i)
		}
		assert.NoError(t, state.Flush(context.Background()), "another path's File.Flush")
		assert.NoError(t, s.FlushExcept(context.Background(), osPath("/state/drafts.json"), osPath("/elsewhere/never-opened.json")))

		// A hung excepted path is not waited for.
		hold := make(chan struct{})
		d.holds = map[string]chan struct{}{osPath("/state/drafts.json"): hold}
		mu.Lock()
		failDrafts = false
		mu.Unlock()
		require.NoError(t, drafts.Save(2))
		require.NoError(t, state.Save(2))
		synctest.Wait()
		assert.NoError(t, s.FlushExcept(context.Background(), osPath("/state/drafts.json")), "FlushExcept with the excepted path hung")
		got, _ := d.content(osPath("/state/state.json"))
		assert.Equal(t, "2\n", got)
		close(hold)
		assert.NoError(t, s.Flush(context.Background()))
	})
}
