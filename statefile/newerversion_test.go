package statefile

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file whose "version" is newer than the newest migration, written by
// another process after the path's first op (a second window after an
// auto-update, a sync tool), is never decoded lossily and never
// overwritten: Load returns the *VersionError, and Save, Update, Remove
// and Flush fail with it, the file keeping every byte. Each Flush checks
// again, so once the newer file is gone the newest save lands.
func TestNewerFileAfterFirstOp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	var ran []int
	s := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	require.NoError(t, f.Save(layoutV3{Version: 3, Titles: []string{"mine"}}))
	require.NoError(t, f.Flush(context.Background()), "precondition: the first op")

	newer := []byte(`{"version":4,"titles":["theirs"],"subtitles":["a field v3 does not know"]}`)
	writeOther(t, path, newer)
	_, err = f.Load(context.Background())
	expectNewer(t, err, "Load")

	calls := 0
	ops := []struct {
		name string
		op   func() error
	}{
		// First, so its base is the file's value: its fn must not get
		// the newer file decoded as v3.
		{"Update", func() error {
			return f.Update(func(v layoutV3) (layoutV3, error) { calls++; v.Titles = append(v.Titles, "x"); return v, nil })
		}},
		{"Save", func() error { return f.Save(layoutV3{Version: 3, Titles: []string{"mine, later"}}) }},
		{"Save of the bytes it last wrote", func() error { return f.Save(layoutV3{Version: 3, Titles: []string{"mine"}}) }},
		{"Remove", f.Remove},
	}
	for _, o := range ops {
		require.NoError(t, o.op(), o.name)
		for i := range 2 {
			expectNewer(t, f.Flush(context.Background()), "Flush %d after %s", i, o.name)
			expectNewer(t, s.Flush(context.Background()), "Store.Flush %d after %s", i, o.name)
		}
		assert.Equal(t, string(newer), readFileT(t, path), "the newer file after %s", o.name)
	}
	assert.Zero(t, calls, "runs of an Update's fn over a newer file")

	require.NoError(t, f.Save(layoutV3{Version: 3, Titles: []string{"last"}}))
	expectNewer(t, f.Flush(context.Background()), "Flush before the newer file goes")
	require.NoError(t, os.Remove(path)) // the person removed it, or went back
	require.NoError(t, f.Flush(context.Background()), "Flush once the newer file is gone")
	var got layoutV3
	require.NoError(t, json.Unmarshal([]byte(readFileT(t, path)), &got))
	assert.Equal(t, []string{"last"}, got.Titles)
}

// A newer release's file that a Flush finds in place of the Store's last
// save, unread, is someone else's save: the Flush's check leaves every
// byte of it, and a Load then returns the *VersionError.
func TestFlushLeavesNewerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	var ran []int
	var traces []SaveTrace
	s := NewStore(Options{Trace: func(tr SaveTrace) { traces = append(traces, tr) }})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	require.NoError(t, f.Save(layoutV3{Version: 3, Titles: []string{"mine"}}))
	require.NoError(t, f.Flush(context.Background()))
	newer := []byte(`{"version":4,"titles":["theirs"]}`)
	writeOther(t, path, newer)
	require.NoError(t, f.Flush(context.Background()))
	require.NoError(t, s.Flush(context.Background()))
	assert.Equal(t, string(newer), readFileT(t, path))
	assert.Len(t, traces, 1, "writes: the first save only")
	_, err = f.Load(context.Background())
	expectNewer(t, err, "Load")
}

// A file an older release wrote after the path's first op is read as its
// migrations make it, in memory (the next save writes the newest version):
// neither Load nor an Update decodes the old format as the new.
func TestOlderFileAfterFirstOp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	var ran []int
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	require.NoError(t, f.Save(layoutV3{Version: 3, Titles: []string{"mine"}}))
	require.NoError(t, f.Flush(context.Background()))
	writeOther(t, path, []byte(`{"version":2,"title":"old release"}`))
	got, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, layoutV3{Version: 3, Titles: []string{"old release"}}, got)
	require.NoError(t, f.Update(func(v layoutV3) (layoutV3, error) { v.Titles = append(v.Titles, "new"); return v, nil }))
	require.NoError(t, f.Flush(context.Background()))
	var onDisk layoutV3
	require.NoError(t, json.Unmarshal([]byte(readFileT(t, path)), &onDisk))
	assert.Equal(t, layoutV3{Version: 3, Titles: []string{"old release", "new"}}, onDisk)
}

// A watch reports a newer release's file as a *VersionError, not as a
// value decoded lossily, and an older release's as migrated.
func TestWatchChecksVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "layout.json")
	var ran []int
	s := NewStore(Options{})
	t.Cleanup(func() { s.Close(context.Background()) })
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
	require.NoError(t, err)
	require.NoError(t, f.Save(layoutV3{Version: 3, Titles: []string{"mine"}}))
	require.NoError(t, f.Flush(context.Background()))
	type report struct {
		v   layoutV3
		err error
	}
	reports := make(chan report, 16)
	stop, err := f.Watch(func(v layoutV3, err error) { reports <- report{v, err} })
	require.NoError(t, err)
	defer stop()
	next := func() report {
		t.Helper()
		select {
		case r := <-reports:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no watch report within 10 s")
			return report{}
		}
	}
	writeOther(t, path, []byte(`{"version":4,"titles":["theirs"],"subtitles":["new"]}`))
	r := next()
	expectNewer(t, r.err, "the watch's report")
	assert.Zero(t, r.v, "the value with a newer file's report")
	writeOther(t, path, []byte(`{"version":2,"title":"old release"}`))
	r = next()
	require.NoError(t, r.err)
	assert.Equal(t, layoutV3{Version: 3, Titles: []string{"old release"}}, r.v)
}

// writeOther replaces path as another program's save does.
func writeOther(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".other"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func expectNewer(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	var ve *VersionError
	if assert.ErrorAs(t, err, &ve, append([]any{what + ": got %v, want a *VersionError"}, append(args, err)...)...) {
		assert.Equal(t, 4, ve.Version)
		assert.Equal(t, 3, ve.Newest)
	}
	assert.ErrorIs(t, err, ErrNewerVersion)
}
