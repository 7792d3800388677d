package statefile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type counter struct {
	N int `json:"n"`
}

// The review's reproduction on a real disk: a program opens the file with
// O_TRUNC, writes `{"n":`, pauses 400 ms (four settle windows), writes
// `2}` and closes. The watch reports {"n":2} once; the file stays where it
// is and nothing is moved aside. The pause is the scenario, not a wait for
// the code under test. Then bytes that stay unparsable are reported left
// in place, and the next save moves them aside before it replaces them.
func TestWatchNeverMovesFileOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"n":1}`), 0o600))
	s := NewStore(Options{})
	defer s.Close(context.Background())
	f, err := Open[counter](s, path)
	require.NoError(t, err)
	type report struct {
		v   counter
		err error
	}
	got := make(chan report, 16)
	stop, err := f.Watch(func(v counter, err error) { got <- report{v, err} })
	require.NoError(t, err)
	defer stop()
	next := func() report {
		t.Helper()
		timer := time.NewTimer(lineWait)
		defer timer.Stop()
		select {
		case r := <-got:
			return r
		case <-timer.C:
			t.Fatalf("no report in %v", lineWait)
			return report{}
		}
	}

	w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = w.WriteString(`{"n":`)
	require.NoError(t, err)
	pause := time.NewTimer(400 * time.Millisecond)
	<-pause.C
	_, err = w.WriteString(`2}`)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	r := next()
	require.NoError(t, r.err, "the first report: got an error, want the finished file")
	assert.Equal(t, counter{N: 2}, r.v)
	assert.Equal(t, `{"n":2}`, readFileT(t, path), "the writer's file")
	assert.Empty(t, corruptAside(t, dir), "files moved aside")

	require.NoError(t, os.WriteFile(path, []byte(`{"n":`), 0o600)) // a writer that never finishes
	r = next()
	var ce *CorruptError
	require.ErrorAs(t, r.err, &ce, "got %v, want a CorruptError", r.err)
	assert.Empty(t, ce.Aside)
	assert.Equal(t, `{"n":`, readFileT(t, path), "the watch left the bytes in place")
	assert.Empty(t, corruptAside(t, dir), "files moved aside by the watch")

	require.NoError(t, f.Save(counter{N: 3}))
	require.NoError(t, f.Flush(context.Background()))
	assert.Equal(t, "{\"n\":3}\n", readFileT(t, path))
	aside := corruptAside(t, dir)
	if assert.Len(t, aside, 1, "the save moves the unread bytes aside first") {
		assert.Equal(t, `{"n":`, readFileT(t, filepath.Join(dir, aside[0])))
	}
}

// corruptAside lists the names in dir that hold bytes moved aside.
func corruptAside(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "p.json"+corruptSuffix) {
			names = append(names, e.Name())
		}
	}
	return names
}
