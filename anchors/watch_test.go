package anchors

import (
	"context"
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

// The merge rules of a watching Store, on the fake file of anchors_test.go:
// a test delivers "another window's save" by calling the watch's fn, as
// statefile's watch goroutine would, and checks memory, OnChange and the
// save the merge queues (or not), on the bubble's clock.

func openWatching(t *testing.T, load fileData, opts Options) (*Store, *fakeFile, *keyedtest.Changes) {
	t.Helper()
	c := &keyedtest.Changes{}
	opts.Watch, opts.OnChange = true, c.Fn
	f := newFake(load)
	s := openFake(t, f, opts)
	require.NoError(t, s.Load(t.Context()))
	return s, f, c
}

func pl(item string, at time.Time) Anchor { return Anchor{Item: item, UpdatedAt: at} }

// recs lists places in file order: chat, place, chat, place...
func recs(cs ...any) []record {
	var r []record
	for i := 0; i < len(cs); i += 2 {
		r = append(r, record{Chat: cs[i].(string), Anchor: cs[i+1].(Anchor)})
	}
	return r
}

// items returns each chat's Item, in the Store's order, least recent first.
func items(s *Store) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for e := s.lru.Front(); e != nil; e = e.Next() {
		r := e.Value.(*record)
		out = append(out, r.Chat+"="+r.Item)
	}
	return out
}

func (d fileData) items() []string {
	var out []string
	for _, r := range d.Anchors {
		out = append(out, r.Chat+"="+r.Item)
	}
	return out
}

// TestMergeRules: per chat the later UpdatedAt wins (the file's on a tie);
// what the file lacks is kept and written back; Forgets travel as
// tombstones; after a merge the places are in UpdatedAt order and the
// oldest beyond Max go. now is the bubble's clock when the change arrives;
// Forget stamps its tombstone with it.
func TestMergeRules(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		local   func(s *Store, now time.Time) // saved before the change arrives
		unsaved func(s *Store, now time.Time) // not yet saved when it arrives
		file    func(now time.Time) fileData
		err     error
		want    []string   // places after the merge, least recent first
		changed [][]string // OnChange calls
		save    []string   // places of the save the merge queues; nil: none
		gone    []string   // tombstones in that save
	}{
		{
			name:  "another chat arrives",
			local: func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file: func(now time.Time) fileData {
				return fileData{Anchors: recs("b", pl("theirs", now.Add(-time.Second)), "a", pl("mine", now))}
			},
			want:    []string{"b=theirs", "a=mine"},
			changed: [][]string{{"b"}},
		},
		{
			name:    "a newer place of the same chat wins",
			local:   func(s *Store, now time.Time) { s.Set("a", pl("mine", now.Add(-time.Second))) },
			file:    func(now time.Time) fileData { return fileData{Anchors: recs("a", pl("theirs", now))} },
			want:    []string{"a=theirs"},
			changed: [][]string{{"a"}},
		},
		{
			name:    "an unsaved Set is never replaced by an older place",
			unsaved: func(s *Store, now time.Time) { s.Set("a", at("scrolling")) },
			file:    func(now time.Time) fileData { return fileData{Anchors: recs("a", pl("theirs", now.Add(-time.Second)))} },
			want:    []string{"a=scrolling"},
			save:    []string{"a=scrolling"},
		},
		{
			name:    "on a tie the file wins",
			local:   func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file:    func(now time.Time) fileData { return fileData{Anchors: recs("a", pl("theirs", now))} },
			want:    []string{"a=theirs"},
			changed: [][]string{{"a"}},
		},
		{
			name:    "a chat missing from the file is kept and written back",
			local:   func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file:    func(now time.Time) fileData { return fileData{Anchors: recs("b", pl("theirs", now.Add(time.Second)))} },
			want:    []string{"a=mine", "b=theirs"},
			changed: [][]string{{"b"}},
			save:    []string{"a=mine", "b=theirs"},
		},
		{
			name:  "a newer tombstone forgets the place",
			local: func(s *Store, now time.Time) { s.Set("a", pl("mine", now.Add(-time.Second))) },
			file: func(now time.Time) fileData {
				return fileData{Forgotten: map[string]time.Time{"a": now}}
			},
			changed: [][]string{{"a"}},
		},
		{
			name:  "an older tombstone loses to a later Set",
			local: func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file: func(now time.Time) fileData {
				return fileData{Forgotten: map[string]time.Time{"a": now.Add(-time.Second)}}
			},
			want: []string{"a=mine"},
			save: []string{"a=mine"},
		},
		{
			name: "a local Forget beats an older place",
			local: func(s *Store, now time.Time) {
				s.Set("a", pl("deleted chat", now.Add(-time.Second)))
				s.Forget("a")
			},
			file: func(now time.Time) fileData {
				return fileData{Anchors: recs("a", pl("deleted chat", now.Add(-time.Second)))}
			},
			save: []string{},
			gone: []string{"a"},
		},
		{
			name: "eviction keeps the newest Max places of both windows",
			max:  2,
			local: func(s *Store, now time.Time) {
				s.Set("a", pl("oldest", now.Add(-3*time.Second)))
				s.Set("b", pl("newest", now))
			},
			file:    func(now time.Time) fileData { return fileData{Anchors: recs("c", pl("middle", now.Add(-time.Second)))} },
			want:    []string{"c=middle", "b=newest"},
			changed: [][]string{{"a", "c"}},
			save:    []string{"c=middle", "b=newest"},
		},
		{
			name: "a place only eviction drops needs no save",
			max:  2,
			local: func(s *Store, now time.Time) {
				s.Set("a", pl("a", now.Add(-time.Second)))
				s.Set("b", pl("b", now))
			},
			file: func(now time.Time) fileData { // from a window with a larger Max
				return fileData{Anchors: recs("c", pl("c", now.Add(-2*time.Second)), "a", pl("a", now.Add(-time.Second)), "b", pl("b", now))}
			},
			want: []string{"a=a", "b=b"},
		},
		{
			name:  "a removed file forgets nothing",
			local: func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file:  func(time.Time) fileData { return fileData{} },
			err:   fs.ErrNotExist,
			want:  []string{"a=mine"},
			save:  []string{"a=mine"},
		},
		{
			name:  "a corrupt file left in place is not saved over",
			local: func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file:  func(time.Time) fileData { return fileData{} },
			err:   &statefile.CorruptError{Path: "/state/anchors.json", Err: errors.New("bad")},
			want:  []string{"a=mine"},
		},
		{
			name:  "an unreadable file changes nothing",
			local: func(s *Store, now time.Time) { s.Set("a", pl("mine", now)) },
			file:  func(time.Time) fileData { return fileData{} },
			err:   fs.ErrPermission,
			want:  []string{"a=mine"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, f, c := openWatching(t, fileData{}, Options{Max: tt.max})
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
				assert.Equal(t, tt.want, items(s), "places after the merge: got, want")
				assert.Equal(t, tt.changed, c.Take(), "OnChange calls: got, want")
				keyedtest.Wait(time.Minute)
				ops := f.Ops()[before:]
				if tt.save == nil {
					assert.Empty(t, ops, "saves after the merge: got, want none")
					return
				}
				require.Len(t, ops, 1, "saves after the merge")
				assert.Equal(t, tt.save, append([]string{}, ops[0].Value.items()...), "the save: got, want")
				assert.ElementsMatch(t, tt.gone, slices.Collect(maps.Keys(ops[0].Value.Forgotten)), "its tombstones: got, want")
			})
		})
	}
}

// TestWatchLifecycle: the watch starts with the read, not at Open, and
// only when asked (OnChange alone asks); Close stops it, and a Close before
// the read keeps it from starting; a read that turns saves off starts none;
// a watch that cannot start leaves a working Store and an error from Load.
func TestWatchLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		f.Gate = make(chan struct{})
		s := openFake(t, f, Options{OnChange: func([]string) {}})
		synctest.Wait()
		assert.Zero(t, f.Watches(), "watches before the read")
		close(f.Gate)
		require.NoError(t, s.Load(t.Context()))
		assert.Equal(t, 1, f.Watches(), "OnChange implies Watch; the read starts it")
		require.NoError(t, s.Close(t.Context()))
		assert.Equal(t, 1, f.Stops(), "Close stops the watch")

		f = newFake(fileData{})
		s = openFake(t, f, Options{})
		require.NoError(t, s.Load(t.Context()))
		assert.Zero(t, f.Watches(), "watches without Watch")

		f = newFake(fileData{})
		f.Gate = make(chan struct{})
		s = openFake(t, f, Options{Watch: true})
		s.Set("a", at("a"))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.ErrorIs(t, s.Close(ctx), context.DeadlineExceeded)
		close(f.Gate)
		synctest.Wait()
		assert.Zero(t, f.Watches(), "a watch started after Close")

		f = newFake(fileData{})
		f.LoadErr = errors.New("input/output error")
		s = openFake(t, f, Options{Watch: true})
		_ = s.Load(t.Context())
		assert.Zero(t, f.Watches(), "a watch started with saves off")

		errNo := errors.New("too many open files")
		f = newFake(fileData{})
		f.WatchErr = errNo
		s = openFake(t, f, Options{Watch: true})
		err := s.Load(t.Context())
		assert.ErrorIs(t, err, errNo)
		assert.ErrorContains(t, err, "not watching")
		s.Set("a", at("a"))
		require.NoError(t, s.Flush(t.Context()), "a Store that cannot watch still saves")
		assert.Len(t, f.Ops(), 1)
	})
}

// TestTombstones: a watching Store's Forget is written as a tombstone (also
// for a chat it has no place of), which the read takes back and which goes
// after keyed.TombstoneTTL; without Watch, Forget writes none.
func TestTombstones(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f, _ := openWatching(t, fileData{}, Options{})
		s.Forget("elsewhere") // a chat this window has no place of
		require.NoError(t, s.Flush(t.Context()))
		ops := f.Ops()
		require.Len(t, ops, 1, "a Forget of an unknown chat still tells the others")
		assert.False(t, ops[0].Remove, "the file with a fresh tombstone stays")
		assert.Equal(t, []string{"elsewhere"}, slices.Collect(maps.Keys(ops[0].Value.Forgotten)))

		again, f2, _ := openWatching(t, fileData{Anchors: recs("elsewhere", pl("old", time.Now().Add(-time.Second))), Forgotten: ops[0].Value.Forgotten}, Options{})
		synctest.Wait()
		_, ok := again.Get("elsewhere")
		assert.False(t, ok, "the read applies the tombstones")
		require.NotEmpty(t, f2.Ops(), "the read rewrites a file whose place its tombstone drops")

		keyedtest.Wait(keyed.TombstoneTTL + time.Second)
		s.Set("b", at("b"))
		require.NoError(t, s.Flush(t.Context()))
		ops = f.Ops()
		assert.Empty(t, ops[len(ops)-1].Value.Forgotten, "an expired tombstone was written")

		f3 := newFake(disk("a"))
		plain := openFake(t, f3, Options{})
		plain.Forget("a")
		require.NoError(t, plain.Flush(t.Context()))
		ops = f3.Ops()
		require.Len(t, ops, 1)
		assert.True(t, ops[0].Remove, "without Watch the last Forget removes the file")
	})
}
