package anchors_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/statefile"
)

// TestHungDisk: while the anchors file's fsync never returns, Sets still
// return at once, Flush gives up by its deadline naming the path, and a
// fresh Store's first read waits behind the hung save (Load gives up with
// its context). Once the disk answers, the last place reaches it.
func TestHungDisk(t *testing.T) {
	fsys := faultfs.MountT(t)
	path := filepath.Join(fsys.Dir(), "anchors.json")
	st := keyedtest.NewStatefile(t)
	s := openDisk(t, st, path, anchors.Options{})
	require.NoError(t, s.Load(t.Context()))
	hang := fsys.Hang(faultfs.Fsync, faultfs.Base("anchors.json"))
	t.Cleanup(hang.Release) // runs before the statefile.Store's Close

	s.Set("c1", anchors.Anchor{Item: "first"})
	queueSave(s)
	<-hang.Blocked() // statefile's writer is inside fsync(2) now

	keyedtest.MustNotBlock(t, func() {
		for i := range 1000 {
			s.Set(fmt.Sprintf("c%d", i%50), anchors.Anchor{Item: "m", Offset: float64(i)})
		}
		s.Set("c1", anchors.Anchor{Item: "last"})
	})

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := s.Flush(ctx)
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, err, &nd)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, []string{path}, nd.Pending, "pending paths")

	fresh := openDisk(t, st, path, anchors.Options{})
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, fresh.Load(ctx), context.DeadlineExceeded, "the read waits behind the hung save")

	hang.Release()
	require.NoError(t, s.Flush(t.Context()))
	got, ok := getWait(t, fresh, "c1")
	assert.True(t, ok)
	assert.Equal(t, "last", got.Item, "the fresh Store reads what was queued before its read")
}

// TestHungReadGUIMethods: the file's first read never returns (its close(2)
// hangs on the FUSE mount, as on a dead network home directory). Every
// method documented as safe on the GUI goroutine (Get, Set, Forget, Len,
// Loaded) returns at once; Get answers false for the file's place until
// the read lands. Once the disk answers, Loaded closes and Get has it.
func TestHungReadGUIMethods(t *testing.T) {
	fsys := faultfs.MountT(t)
	path := filepath.Join(fsys.Dir(), "anchors.json")
	seed := openDisk(t, keyedtest.NewStatefile(t), path, anchors.Options{})
	seed.Set("c1", anchors.Anchor{Item: "from the file"})
	require.NoError(t, seed.Close(t.Context()))
	hang := fsys.Hang(faultfs.Close, faultfs.Base("anchors.json"))
	t.Cleanup(hang.Release) // runs before the statefile.Store's Close

	s := openDisk(t, keyedtest.NewStatefile(t), path, anchors.Options{Watch: true})
	var got bool
	keyedtest.MustNotBlock(t, func() {
		_, got = s.Get("c1") // starts the read
		<-hang.Blocked()     // the read is inside close(2) now
		_, got = s.Get("c1")
		s.Set("c2", anchors.Anchor{Item: "mine"})
		s.Forget("c3")
		_ = s.Len()
		_ = s.Loaded()
		_, got = s.Get("c1")
	})
	assert.False(t, got, "Get of the unread file's place: got one")
	select {
	case <-s.Loaded():
		t.Fatal("Loaded closed while the read hangs")
	default:
	}

	hang.Release()
	a, ok := getWait(t, s, "c1")
	assert.True(t, ok && a.Item == "from the file", "after the disk answered: got %+v, %t", a, ok)
	a, ok = s.Get("c2")
	assert.True(t, ok && a.Item == "mine", "a place set during the hang: got %+v, %t", a, ok)
}

// openDisk opens the anchors store at path; the test's end closes it,
// once every hang is released.
func openDisk(t *testing.T, st *statefile.Store, path string, opts anchors.Options) *anchors.Store {
	t.Helper()
	s, err := anchors.Open(st, path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { closeBounded(t, s) })
	return s
}

// getWait is Get once the file's read has landed.
func getWait(t *testing.T, s *anchors.Store, chat string) (anchors.Anchor, bool) {
	t.Helper()
	require.NoError(t, s.Load(t.Context()), "the file's read")
	return s.Get(chat)
}

// queueSave hands the store's unsaved edits to statefile now, as its
// settle timer would, without waiting for the disk: a Flush whose
// context has ended queues them and returns.
func queueSave(f interface{ Flush(context.Context) error }) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = f.Flush(ctx)
}

// closeBounded closes s at the test's end, giving up after a while on a
// disk a failed test left hung.
func closeBounded(t *testing.T, s interface{ Close(context.Context) error }) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.Close(ctx)
}
