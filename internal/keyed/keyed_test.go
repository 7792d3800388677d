package keyed

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offmain/offmain/internal/fakefile"
	"github.com/offmain/offmain/statefile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// kv is the smallest keyed store: a map, saved whole, that the read merges
// under the keys set since Open. The Core guards m with mu.
type kv struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *kv) set(c *Core[map[string]string], k, v string) {
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
	c.Scheduler().Mark()
}

func openKV(t *testing.T, f File[map[string]string]) (*Core[map[string]string], *kv) {
	t.Helper()
	s := &kv{m: map[string]string{}}
	c := New(f, &s.mu, Config[map[string]string]{
		Name: "kv", Unit: "edit",
		Read: func(data map[string]string, _ time.Time) bool {
			for k, v := range data {
				if _, ok := s.m[k]; !ok {
					s.m[k] = v
				}
			}
			return false
		},
		Snapshot: func(time.Time) (map[string]string, bool) { return maps.Clone(s.m), len(s.m) > 0 },
	})
	t.Cleanup(func() { c.Scheduler().Stop() })
	return c, s
}

// TestSaveWaitsForRead: a save due before the read has landed is queued by
// the read, holding the file's keys under the ones set since Open.
func TestSaveWaitsForRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakefile.File[map[string]string]{Gate: make(chan struct{}), LoadValue: map[string]string{"a": "file", "b": "file"}}
		c, s := openKV(t, f)
		s.set(c, "a", "mine")
		require.True(t, c.Scheduler().Flush(), "the settle's save")
		assert.Empty(t, f.Ops(), "saved before the read: got, want none")
		close(f.Gate)
		require.NoError(t, c.Load(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 1, "saves after the read")
		assert.Equal(t, map[string]string{"a": "mine", "b": "file"}, ops[0].Value)
	})
}

// TestReadErrors: what each kind of read error means for Load, saves and
// Flush.
func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		loadErr error  // matched by Load's error; nil: none
		text    string // in Load's error
		saves   bool
	}{
		{"missing file", &fs.PathError{Op: "open", Path: "p", Err: fs.ErrNotExist}, nil, "", true},
		{"corrupt file", &statefile.CorruptError{Path: "p", Err: errors.New("bad")}, statefile.ErrCorrupt, "kv: starting empty", true},
		{"unreadable file", fs.ErrPermission, fs.ErrPermission, "kv: not saving", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakefile.File[map[string]string]{LoadErr: tc.err}
			c, s := openKV(t, f)
			err := c.Load(t.Context())
			if tc.loadErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.loadErr)
				assert.ErrorContains(t, err, tc.text)
			}
			s.set(c, "a", "x")
			ferr := c.Close(t.Context())
			assert.Equal(t, tc.saves, len(f.Ops()) == 1, "saved: got, want %t", tc.saves)
			assert.Equal(t, tc.saves, ferr == nil, "Close: got %v", ferr)
		})
	}
}

func TestDiff(t *testing.T) {
	same := func(a, b int) bool { return a == b }
	before := map[string]int{"kept": 1, "changed": 1, "gone": 1}
	after := map[string]int{"kept": 1, "changed": 2, "new": 1}
	assert.Equal(t, []string{"changed", "gone", "new"}, Diff(before, after, same))
	assert.Empty(t, Diff(before, before, same))
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	gone := map[string]time.Time{
		"fresh":   now.Add(-TombstoneTTL),
		"expired": now.Add(-TombstoneTTL - time.Nanosecond),
	}
	Prune(gone, now)
	assert.Equal(t, []string{"fresh"}, slices.Collect(maps.Keys(gone)))
	Prune(nil, now) // a store that does not watch
}
