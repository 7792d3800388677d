package drafts_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/statefile"
)

// TestHungDisk: while the drafts file's fsync never returns, edits still
// return at once, Flush gives up by its deadline naming the path, and once
// the disk answers the last edit reaches it.
func TestHungDisk(t *testing.T) {
	fsys := faultfs.MountT(t)
	path := filepath.Join(fsys.Dir(), "drafts.json")
	st := keyedtest.NewStatefile(t)
	s := openDisk(t, st, path, drafts.Options{})
	hang := fsys.Hang(faultfs.Fsync, faultfs.Base("drafts.json"))
	t.Cleanup(hang.Release) // runs before the statefile.Store's Close

	s.Set("a", "first")
	queueSave(s)
	<-hang.Blocked() // statefile's writer is inside fsync(2) now

	keyedtest.MustNotBlock(t, func() {
		for i := range 1000 {
			s.Set("a", "typing "+string(rune('a'+i%26)))
		}
		s.Set("a", "last")
	})

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := s.Flush(ctx)
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, err, &nd)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, []string{path}, nd.Pending, "pending paths")

	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	var fresh *drafts.Store
	keyedtest.MustNotBlock(t, func() {
		fresh, err = drafts.Open(st, path, drafts.Options{})
		require.NoError(t, err, "Open never waits for the read")
		_, ok := fresh.Get("a")
		assert.False(t, ok, "Get before the read landed: got a draft, want memory's none")
	})
	t.Cleanup(func() { closeBounded(t, fresh) })
	assert.ErrorIs(t, fresh.Load(ctx), context.DeadlineExceeded, "Load's read waits behind the hung save")

	hang.Release()
	require.NoError(t, s.Flush(t.Context()))
	again := openDisk(t, keyedtest.NewStatefile(t), path, drafts.Options{})
	d, _ := again.Get("a")
	assert.Equal(t, "last", d.Text, "after the disk came back")
}

// TestHungDiskGUIMethods: while the drafts file's fsync never returns and
// a watch is on, every method documented as never touching the disk (Set,
// Put, Delete, Get, Tabs) returns at once.
func TestHungDiskGUIMethods(t *testing.T) {
	fsys := faultfs.MountT(t)
	path := filepath.Join(fsys.Dir(), "drafts.json")
	st := keyedtest.NewStatefile(t)
	s, err := drafts.Open(st, path, drafts.Options{Watch: true})
	require.NoError(t, err)
	require.NoError(t, s.Load(t.Context()))
	t.Cleanup(func() { closeBounded(t, s) })
	hang := fsys.Hang(faultfs.Fsync, faultfs.Base("drafts.json"))
	t.Cleanup(hang.Release) // runs before the statefile.Store's Close

	s.Set("a", "first")
	queueSave(s)
	<-hang.Blocked() // statefile's writer is inside fsync(2) now

	var tabs []string
	keyedtest.MustNotBlock(t, func() {
		s.Put("b", drafts.Draft{Text: "put", Attachments: []string{"/x.png"}})
		s.Set("a", "second")
		s.Delete("b")
		_, _ = s.Get("a")
		tabs = s.Tabs()
		queueSave(s)
	})
	assert.Equal(t, []string{"a"}, tabs)
	hang.Release()
	require.NoError(t, s.Close(t.Context()))
}

// openDisk opens the drafts store at path and reads its file; the test's
// end closes it, once every hang is released.
func openDisk(t *testing.T, st *statefile.Store, path string, opts drafts.Options) *drafts.Store {
	t.Helper()
	s, err := drafts.Open(st, path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { closeBounded(t, s) })
	require.NoError(t, s.Load(t.Context()))
	return s
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
