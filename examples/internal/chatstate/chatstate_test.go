package chatstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/flush"
)

// testState is a State that a test quits, or its cleanup does.
type testState struct {
	*State
	quit bool
}

// open opens the state under dir, quit at cleanup if the test did not.
func open(t *testing.T, dir string, sync bool) *testState {
	t.Helper()
	s, err := Open(dir, Options{Chats: []string{"general", "build"}, SyncSaves: sync})
	require.NoError(t, err)
	ts := &testState{State: s}
	t.Cleanup(func() {
		if !ts.quit {
			ts.Hook.Exit()
			ts.Close()
		}
	})
	return ts
}

// quit runs s's quit path and requires that everything drained.
func quit(t *testing.T, s *testState) {
	t.Helper()
	s.quit = true
	var stopped bool
	s.Hook.AddStop("agents", flush.Func(func(context.Context) error { stopped = true; return nil }))
	rep := s.Hook.Exit()
	s.Close()
	require.True(t, rep.Saved, "flush report: %v", rep)
	require.True(t, stopped, "Exit ran the stopper")
}

// TestRestartRestores saves a draft, two scroll places (one then forgotten)
// and a transcript in one mode and reads them back in each mode: the two
// modes write the same files in the same format.
func TestRestartRestores(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, again bool // sync saves in the first run, in the restart
	}{
		{"offmain", false, false},
		{"sync-saves", true, true},
		{"offmain then sync-saves", false, true},
		{"sync-saves then offmain", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, tc.first)
			place := anchors.Anchor{Item: "m1", Offset: 2.5}
			require.NoError(t, s.Saves.SetDraft("general", "half a thought"))
			require.NoError(t, s.Saves.SetDraft("build", "gone soon"))
			require.NoError(t, s.Saves.SetDraft("build", ""))
			require.NoError(t, s.Saves.SetAnchor("general", place))
			require.NoError(t, s.Saves.SetAnchor("build", place))
			require.NoError(t, s.Saves.ForgetAnchor("build"))
			items := []Item{{ID: "m0", From: "you", Text: "hi", At: time.Unix(1, 0).UTC()}, {ID: "m1", From: "agent", Text: "ack: hi", At: time.Unix(2, 0).UTC()}}
			require.NoError(t, s.Transcripts.Save("general", 2, items))
			require.NoError(t, s.Transcripts.Save("unknown", 1, items), "a chat not opened is ignored")
			quit(t, s)

			s = open(t, dir, tc.again)
			assert.Equal(t, "half a thought", s.Saves.Draft("general"))
			assert.Empty(t, s.Saves.Draft("build"), "a deleted draft stays deleted")
			got, ok := s.Saves.Anchor("general")
			require.True(t, ok, "scroll place restored")
			assert.Equal(t, place.Item, got.Item)
			assert.Equal(t, place.Offset, got.Offset)
			_, ok = s.Saves.Anchor("build")
			assert.False(t, ok, "a forgotten place stays forgotten")
			assert.Equal(t, Transcript{Version: 1, Next: 2, Items: items}, s.Transcripts.Loaded("general"))
			assert.Equal(t, Transcript{}, s.Transcripts.Loaded("build"), "no transcript yet")
			assert.Empty(t, s.Notes)
			quit(t, s)
		})
	}
}

func TestSaverNames(t *testing.T) {
	assert.Equal(t, "offmain saves", open(t, t.TempDir(), false).Saves.Name())
	assert.Equal(t, "sync saves", open(t, t.TempDir(), true).Saves.Name())
}

// TestSyncSavesWriteAtOnce: with SyncSaves a change is on disk when its call
// returns, before any flush.
func TestSyncSavesWriteAtOnce(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, true)
	require.NoError(t, s.Saves.SetDraft("general", "typed"))
	b, err := os.ReadFile(filepath.Join(dir, draftsFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"typed"`)
	require.NoError(t, s.Saves.SetDraft("general", ""))
	_, err = os.Stat(filepath.Join(dir, draftsFile))
	assert.ErrorIs(t, err, os.ErrNotExist, "no drafts: no file")
}

// TestCorruptFilesAreNoted: a file that does not parse is noted and the app
// starts empty, in both modes.
func TestCorruptFilesAreNoted(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(map[bool]string{false: "offmain", true: "sync-saves"}[sync], func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, draftsFile), []byte("{not json"), 0o600))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "transcripts"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "transcripts", "general.json"), []byte("{not json"), 0o600))
			s := open(t, dir, sync)
			assert.Len(t, s.Notes, 2, "the drafts file and the transcript: %q", s.Notes)
			assert.Empty(t, s.Saves.Draft("general"))
			assert.Equal(t, Transcript{}, s.Transcripts.Loaded("general"))
		})
	}
}

func TestOpenFailsOnAFileForFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	_, err := Open(path, Options{})
	assert.Error(t, err)
}

func TestNote(t *testing.T) {
	assert.Equal(t, "draft not saved: disk full", Note("draft not saved", errors.New("disk full")))
	joined := errors.Join(errors.New("drafts: save: no space left on device"), errors.New("anchors: read: permission denied"))
	assert.Equal(t, "save failed: drafts: save: no space left on device | anchors: read: permission denied",
		Note("save failed", joined), "a joined error stays on the status's one line")
	assert.Equal(t, "saved", Note("saved", nil))
	assert.Equal(t, "saved again: drafts.json", Saved("/home/u/.config/app/drafts.json"))
}
