package chatstate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitFor returns the next value from ch, failing the test after a bound
// far beyond statefile's first retry (1 s) and drafts' first read retry
// (0.25 s).
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: not within 20 s", what)
		var zero T
		return zero
	}
}

// TestRecoveredAfterFailures: a transcript write that failed (a directory
// at the file's name: rename(2) over it fails, for root too) reaches
// OnError, and once the directory is gone statefile's retry lands and
// OnRecovered names the file; a drafts file that could not be read at Open
// (a directory again) is a note and reaches OnError too, and once it can be
// read OnRecovered names it, and the draft typed meanwhile is saved.
func TestRecoveredAfterFailures(t *testing.T) {
	dir := t.TempDir()
	draftsAt := filepath.Join(dir, draftsFile)
	require.NoError(t, os.MkdirAll(filepath.Join(draftsAt, "x"), 0o700))
	failed := make(chan error, 16)
	recovered := make(chan string, 16)
	s, err := Open(dir, Options{Chats: []string{"general"},
		OnError:     func(err error) { failed <- err },
		OnRecovered: func(path string) { recovered <- path }})
	require.NoError(t, err)
	require.NotEmpty(t, s.Notes, "notes: want what the drafts read met")
	assert.ErrorContains(t, waitFor(t, failed, "OnError for the drafts file that cannot be read"), draftsAt,
		"the drafts read's failure takes the Store's one route to the app")

	require.NoError(t, s.Saves.SetDraft("general", "typed while unreadable"))
	require.NoError(t, os.RemoveAll(draftsAt))
	assert.Equal(t, draftsAt, waitFor(t, recovered, "OnRecovered after the drafts file became readable"))

	transcript := filepath.Join(dir, "transcripts", "general.json")
	require.NoError(t, os.MkdirAll(filepath.Join(transcript, "x"), 0o700))
	require.NoError(t, s.Transcripts.Save("general", 1, []Item{{ID: "m0", From: "you", Text: "hi"}}))
	waitFor(t, failed, "OnError for the transcript written over a directory")
	require.NoError(t, os.RemoveAll(transcript))
	assert.Equal(t, transcript, waitFor(t, recovered, "OnRecovered after the transcript's retry landed"))

	rep := s.Hook.Exit()
	s.Close()
	require.True(t, rep.Saved, "flush report: %v", rep)
	b, err := os.ReadFile(draftsAt)
	require.NoError(t, err)
	assert.Contains(t, string(b), "typed while unreadable", "drafts.json: want the draft typed while it could not be read")
}
