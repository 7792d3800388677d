package keyedtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// Store is what the read-back cases need of a keyed store.
type Store interface {
	Flush(ctx context.Context) error
	Close(ctx context.Context) error
}

// ReadBack is one way of making what a store wrote durable: Finish does it
// to s, opened in st, and returns the statefile.Store to read the file back
// through.
type ReadBack struct {
	Name   string
	Finish func(t *testing.T, st *statefile.Store, s Store) *statefile.Store
}

// ReadBacks are the ways a store's saves reach the next one to open the
// file: a Flush; a Close that does not wait, then statefile's Close, which
// drains the queue; and a Close that does not wait, with the save maybe
// still queued on the same statefile.Store, where the next read waits for
// it.
var ReadBacks = []ReadBack{
	{"after Flush, fresh statefile.Store", func(t *testing.T, st *statefile.Store, s Store) *statefile.Store {
		require.NoError(t, s.Flush(t.Context()))
		return NewStatefile(t)
	}},
	{"after statefile.Store.Close", func(t *testing.T, st *statefile.Store, s Store) *statefile.Store {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_ = s.Close(ctx)                          // queues the save, does not wait for it
		require.NoError(t, st.Close(t.Context())) // Close drains what was queued
		return NewStatefile(t)
	}},
	{"same statefile.Store, save still queued", func(t *testing.T, st *statefile.Store, s Store) *statefile.Store {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_ = s.Close(ctx) // queued, maybe not written: the next read waits for it
		return st
	}},
}
