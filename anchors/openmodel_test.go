package anchors

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

// TestLoadedWithoutGet: the read starts at Open, so a GUI that only waits
// on Loaded (no Get, Set or Load first) is told when the places are there.
func TestLoadedWithoutGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(disk("x"))
		s := openFake(t, f, Options{})
		synctest.Wait()
		select {
		case <-s.Loaded():
		default:
			t.Fatal("Loaded not closed: Open did not start the read")
		}
		a, ok := s.Get("x")
		assert.True(t, ok && a.Item == "disk-x", "Get after Loaded: got %+v, %t", a, ok)
	})
}

// TestOpenContextUnreadable: OpenContext is Open then Load: over a file
// that cannot be read it returns a working Store with the read's error,
// and the Store never saves over the file.
func TestOpenContextUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anchors.json")
	require.NoError(t, os.Mkdir(path, 0o700)) // reading it fails with EISDIR
	st := keyedtest.NewStatefile(t)
	s, err := openLoad(t.Context(), st, path, Options{})
	require.NotNil(t, s)
	assert.ErrorIs(t, err, syscall.EISDIR)
	assert.NotErrorIs(t, err, statefile.ErrCorrupt)
	s.Set("c", Anchor{Item: "m"})
	ferr := s.Close(t.Context())
	assert.ErrorIs(t, ferr, syscall.EISDIR, "Close says saves are off, and why")
	assert.DirExists(t, path, "what could not be read must be left alone")
}

// The errors the package returns are one line each, even when they join
// several (a read that failed and a watch that could not start).
func TestErrorTextsOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(fileData{})
		f.LoadErr = errors.Join(errors.New("input/output"), errors.New("again"))
		s := openFake(t, f, Options{})
		err := s.Load(t.Context())
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "\n", "Load: got %q", err.Error())
		s.Set("a", at("a"))
		ferr := s.Flush(t.Context())
		require.Error(t, ferr)
		assert.NotContains(t, ferr.Error(), "\n", "Flush: got %q", ferr.Error())
		assert.True(t, strings.HasPrefix(ferr.Error(), "anchors: "), "got %q, want the package prefix", ferr.Error())

		f = newFake(fileData{})
		f.WatchErr = errors.New("inotify\nlimit")
		s = openFake(t, f, Options{Watch: true})
		err = s.Load(t.Context())
		require.ErrorContains(t, err, "not watching")
		assert.NotContains(t, err.Error(), "\n", "Load: got %q", err.Error())
		f.SetSaveErr(errors.Join(statefile.ErrClosed, errors.New("second")))
		s.Set("a", at("a"))
		keyedtest.Wait(time.Minute)
		ferr = s.Flush(t.Context())
		require.ErrorIs(t, ferr, statefile.ErrClosed)
		assert.NotContains(t, ferr.Error(), "\n", "Flush: got %q", ferr.Error())
	})
}
