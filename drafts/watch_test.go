package drafts

import (
	"errors"
	"io/fs"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyed"
	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

// The merge rules of a watching Store, on the fake file of drafts_test.go:
// a test delivers "another window's save" by calling the watch's fn, as
// statefile's watch goroutine would, and checks memory, OnChange and the
// save the merge queues (or not), on the bubble's clock.

func openWatching(t *testing.T, load fileData) (*Store, *fakeFile, *keyedtest.Changes) {
	t.Helper()
	c := &keyedtest.Changes{}
	s, f := openFake(t, Options{Watch: true, OnChange: c.Fn}, load)
	return s, f, c
}

func dr(text string, at time.Time) Draft { return Draft{Text: text, UpdatedAt: at} }

func drafts(ds ...any) map[string]Draft {
	m := map[string]Draft{}
	for i := 0; i < len(ds); i += 2 {
		m[ds[i].(string)] = ds[i+1].(Draft)
	}
	return m
}

func texts(s *Store) map[string]string {
	m := map[string]string{}
	for _, tab := range s.Tabs() {
		d, _ := s.Get(tab)
		m[tab] = d.Text
	}
	return m
}

// TestMergeRules: per tab the later UpdatedAt wins (the file's on a tie);
// what the file lacks is kept and written back; deletes travel as
// tombstones. now is the bubble's clock when the change arrives; Delete
// stamps its tombstone with it.
func TestMergeRules(t *testing.T) {
	tests := []struct {
		name    string
		local   func(s *Store, now time.Time) // saved before the change arrives
		unsaved func(s *Store, now time.Time) // not yet saved when it arrives
		file    func(now time.Time) fileData
		err     error
		want    map[string]string // texts after the merge
		changed [][]string        // OnChange calls
		save    map[string]string // texts of the save the merge queues; nil: none
		gone    []string          // tombstones in that save
	}{
		{
			name:  "another tab arrives",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts("a", dr("mine", now), "b", dr("theirs", now))}
			},
			want:    map[string]string{"a": "mine", "b": "theirs"},
			changed: [][]string{{"b"}},
		},
		{
			name:    "a newer draft of the same tab wins",
			local:   func(s *Store, now time.Time) { s.Put("a", dr("mine", now.Add(-time.Second))) },
			file:    func(now time.Time) fileData { return fileData{Drafts: drafts("a", dr("theirs", now))} },
			want:    map[string]string{"a": "theirs"},
			changed: [][]string{{"a"}},
		},
		{
			name:    "an unsaved edit is never replaced by an older draft",
			unsaved: func(s *Store, now time.Time) { s.Set("a", "typing") },
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts("a", dr("theirs", now.Add(-time.Second)))}
			},
			want: map[string]string{"a": "typing"},
			save: map[string]string{"a": "typing"},
		},
		{
			name:  "a saved edit newer than the file's is written back",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts("a", dr("stale", now.Add(-time.Second)), "b", dr("theirs", now))}
			},
			want:    map[string]string{"a": "mine", "b": "theirs"},
			changed: [][]string{{"b"}},
			save:    map[string]string{"a": "mine", "b": "theirs"},
		},
		{
			name:    "on a tie the file wins",
			local:   func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file:    func(now time.Time) fileData { return fileData{Drafts: drafts("a", dr("theirs", now))} },
			want:    map[string]string{"a": "theirs"},
			changed: [][]string{{"a"}},
		},
		{
			name:    "a tab missing from the file is kept and written back",
			local:   func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file:    func(now time.Time) fileData { return fileData{Drafts: drafts("b", dr("theirs", now))} },
			want:    map[string]string{"a": "mine", "b": "theirs"},
			changed: [][]string{{"b"}},
			save:    map[string]string{"a": "mine", "b": "theirs"},
		},
		{
			name:  "a newer tombstone deletes the draft",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now.Add(-time.Second))) },
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts(), Deleted: map[string]time.Time{"a": now}}
			},
			want:    map[string]string{},
			changed: [][]string{{"a"}},
		},
		{
			name:  "an older tombstone loses to a later edit",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts(), Deleted: map[string]time.Time{"a": now.Add(-time.Second)}}
			},
			want: map[string]string{"a": "mine"},
			save: map[string]string{"a": "mine"},
		},
		{
			name: "a local delete beats an older draft",
			local: func(s *Store, now time.Time) {
				s.Put("a", dr("sent", now.Add(-time.Second)))
				s.Delete("a")
			},
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts("a", dr("sent", now.Add(-time.Second)))}
			},
			want: map[string]string{},
			save: map[string]string{},
			gone: []string{"a"},
		},
		{
			name: "a draft newer than the local delete comes back",
			local: func(s *Store, now time.Time) {
				s.Put("a", dr("sent", now.Add(-time.Second)))
				s.Delete("a")
			},
			file:    func(now time.Time) fileData { return fileData{Drafts: drafts("a", dr("new", now.Add(time.Second)))} },
			want:    map[string]string{"a": "new"},
			changed: [][]string{{"a"}},
		},
		{
			name:  "an expired tombstone deletes nothing",
			local: func(s *Store, now time.Time) { s.Put("a", dr("old", now.Add(-2*keyed.TombstoneTTL))) },
			file: func(now time.Time) fileData {
				return fileData{Drafts: drafts(), Deleted: map[string]time.Time{"a": now.Add(-keyed.TombstoneTTL - time.Second)}}
			},
			want: map[string]string{"a": "old"},
			save: map[string]string{"a": "old"},
		},
		{
			name:  "a removed file deletes nothing",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file:  func(time.Time) fileData { return fileData{} },
			err:   fs.ErrNotExist,
			want:  map[string]string{"a": "mine"},
			save:  map[string]string{"a": "mine"},
		},
		{
			name: "a removed file, with nothing here, is left removed",
			file: func(time.Time) fileData { return fileData{} },
			err:  fs.ErrNotExist,
			want: map[string]string{},
		},
		{
			name:  "a corrupt file left in place is not saved over",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file:  func(time.Time) fileData { return fileData{} },
			err:   &statefile.CorruptError{Path: "/x/drafts.json", Err: errors.New("bad")},
			want:  map[string]string{"a": "mine"},
		},
		{
			name:  "an unreadable file changes nothing",
			local: func(s *Store, now time.Time) { s.Put("a", dr("mine", now)) },
			file:  func(time.Time) fileData { return fileData{} },
			err:   fs.ErrPermission,
			want:  map[string]string{"a": "mine"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, f, c := openWatching(t, fileData{})
				now := time.Now().UTC()
				if tt.local != nil {
					tt.local(s, now)
				}
				require.NoError(t, s.Flush(t.Context()))
				if tt.unsaved != nil {
					tt.unsaved(s, now)
				}
				before := len(f.Ops())
				f.Deliver(t, tt.file(now), tt.err)
				assert.Equal(t, tt.want, texts(s), "drafts after the merge: got, want")
				assert.Equal(t, tt.changed, c.Take(), "OnChange calls: got, want")
				keyedtest.Wait(time.Minute)
				ops := f.Ops()[before:]
				if tt.save == nil {
					assert.Empty(t, ops, "saves after the merge: got, want none")
					return
				}
				require.Len(t, ops, 1, "saves after the merge")
				assert.Equal(t, tt.save, ops[0].Value.texts(), "the save: got, want")
				assert.ElementsMatch(t, tt.gone, keys(ops[0].Value.Deleted), "its tombstones: got, want")
			})
		})
	}
}

func keys(m map[string]time.Time) []string { return slices.Collect(maps.Keys(m)) }

// TestTwoWindowsConverge runs two watching Stores over one fake disk, each
// delivering its saves to the other, the way a stale window's save meets
// a newer one: B saves before it has merged A's new tab, so B's file lacks
// it. A keeps the tab and writes it back, B merges it, and both end with
// the same drafts and no more saves (no ping-pong).
func TestTwoWindowsConverge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, fa, _ := openWatching(t, fileData{})
		b, fb, _ := openWatching(t, fileData{})
		a.Set("t1", "A's new tab")
		b.Set("t2", "B's new tab")
		require.NoError(t, a.Flush(t.Context()))
		require.NoError(t, b.Flush(t.Context())) // B's save lands over A's: it lacks t1
		last := func(f *fakeFile) fileData {
			ops := f.Ops()
			op := ops[len(ops)-1]
			return fileData{Drafts: maps.Clone(op.Value.Drafts), Deleted: maps.Clone(op.Value.Deleted)}
		}
		fa.Deliver(t, last(fb), nil) // A sees B's file
		keyedtest.Wait(time.Minute)  // A writes t1 back
		fb.Deliver(t, last(fa), nil) // B sees A's file
		keyedtest.Wait(time.Minute)
		want := map[string]string{"t1": "A's new tab", "t2": "B's new tab"}
		assert.Equal(t, want, texts(a))
		assert.Equal(t, want, texts(b))
		assert.Len(t, fa.Ops(), 2, "A's saves: its edit, then t1 written back")
		assert.Len(t, fb.Ops(), 1, "B's saves: its edit only, A's file needed no answer")

		b.Delete("t1") // sent from window B
		require.NoError(t, b.Flush(t.Context()))
		fa.Deliver(t, last(fb), nil)
		keyedtest.Wait(time.Minute)
		_, ok := a.Get("t1")
		assert.False(t, ok, "the delete reached A")
		assert.Len(t, fa.Ops(), 2, "A answered a delete it agreed with")
	})
}

// TestWatchOptions: the watch starts only when asked (OnChange alone asks);
// Close stops it; a watch that cannot start leaves a usable Store and an
// error saying so.
func TestWatchOptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, f := openFake(t, Options{}, fileData{})
		assert.Zero(t, f.Watches(), "watches without Watch")

		s, f := openFake(t, Options{OnChange: func([]string) {}}, fileData{})
		assert.Equal(t, 1, f.Watches(), "OnChange implies Watch")
		require.NoError(t, s.Close(t.Context()))
		assert.Equal(t, 1, f.Stops(), "Close stops the watch")

		errNo := errors.New("too many open files")
		f = &fakeFile{WatchErr: errNo}
		s, err := openSync(t.Context(), f, Options{Watch: true})
		require.NotNil(t, s, "a Store that cannot watch still works")
		assert.ErrorIs(t, err, errNo)
		assert.ErrorContains(t, err, "not watching")
		s.Set("a", "x")
		require.NoError(t, s.Close(t.Context()))
		assert.Len(t, f.Ops(), 1)
	})
}

// TestTombstones: a watching Store writes a delete as a tombstone (the
// file stays), drops it after keyed.TombstoneTTL, and an Open after that
// removes a file left with expired tombstones only. Without Watch, the
// last delete removes the file as before.
func TestTombstones(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f, _ := openWatching(t, fileData{})
		s.Set("a", "x")
		require.NoError(t, s.Flush(t.Context()))
		s.Set("a", "") // empty text deletes, as Delete does
		require.NoError(t, s.Flush(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 2)
		assert.False(t, ops[1].Remove, "the file with a fresh tombstone stays")
		assert.Empty(t, ops[1].Value.Drafts)
		assert.Equal(t, []string{"a"}, keys(ops[1].Value.Deleted))

		keyedtest.Wait(keyed.TombstoneTTL + time.Second)
		s.Set("b", "y")
		require.NoError(t, s.Flush(t.Context()))
		ops = f.Ops()
		assert.Empty(t, ops[2].Value.Deleted, "an expired tombstone was written")

		old := time.Now().Add(-keyed.TombstoneTTL - time.Second)
		_, f2, _ := openWatching(t, fileData{Drafts: drafts(), Deleted: map[string]time.Time{"a": old}})
		keyedtest.Wait(time.Minute)
		ops = f2.Ops()
		require.Len(t, ops, 1, "Open rewrites a file with expired tombstones")
		assert.True(t, ops[0].Remove, "and, with no draft left, removes it")

		plain, f3 := openFake(t, Options{}, fileData{})
		plain.Set("a", "x")
		require.NoError(t, plain.Flush(t.Context()))
		plain.Delete("a")
		require.NoError(t, plain.Flush(t.Context()))
		ops = f3.Ops()
		require.Len(t, ops, 2)
		assert.True(t, ops[1].Remove, "without Watch the last delete removes the file")
		assert.Nil(t, ops[0].Value.Deleted)
	})
}
