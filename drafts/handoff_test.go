package drafts

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldSave is the fake file with each Save held until release closes; it
// says on entered that a save has begun.
type heldSave struct {
	*fakeFile
	entered chan struct{}
	release chan struct{}
}

func (h heldSave) Save(v fileData) error {
	h.entered <- struct{}{}
	<-h.release
	return h.fakeFile.Save(v)
}

// TestDeleteWhileSaveIsHandedOver: a Delete that lands while a save is
// being handed to statefile must not be undone by that save's record of
// what it wrote. Before, the record was taken after the hand-over, so it
// still held the deleted draft, and typing the same text again took the
// old draft's time, older than the delete.
func TestDeleteWhileSaveIsHandedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeFile{Start: time.Now()}
		held := heldSave{fakeFile: f, entered: make(chan struct{}, 1), release: make(chan struct{})}
		s, err := openSync(t.Context(), held, Options{})
		require.NoError(t, err)
		t.Cleanup(func() { s.sched.Stop() })

		s.Set("a", "x")
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, s.Flush(t.Context())) })
		<-held.entered // the save took its snapshot and is handing it over
		keyedtest.Wait(time.Second)
		s.Delete("a")
		deleted := time.Now()
		close(held.release)
		wg.Wait()

		keyedtest.Wait(100 * time.Millisecond) // less than the settle window: no save in between
		s.Set("a", "x")
		d, ok := s.Get("a")
		require.True(t, ok)
		assert.False(t, d.UpdatedAt.Before(deleted),
			"the draft typed again after the delete dates from %v, before the delete at %v", d.UpdatedAt, deleted)
	})
}
