package statefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corruptLoads writes each content to path in turn and Loads it, as
// restarts that each find a corrupt file do, and returns the Aside of each.
func corruptLoads(t *testing.T, opts Options, path string, contents ...string) []string {
	t.Helper()
	var asides []string
	for _, c := range contents {
		require.NoError(t, os.WriteFile(path, []byte(c), 0o600))
		s := NewStore(opts)
		f, err := Open[doc](s, path)
		require.NoError(t, err)
		_, err = f.Load(context.Background())
		var ce *CorruptError
		require.ErrorAs(t, err, &ce, "Load of %q", c)
		require.NotEmpty(t, ce.Aside, "Load of %q moved nothing: %v", c, err)
		asides = append(asides, ce.Aside)
		require.NoError(t, s.Close(t.Context()))
	}
	return asides
}

// asideContents returns the content of each moved-aside copy of path,
// newest first.
func asideContents(t *testing.T, path string) []string {
	t.Helper()
	var got []string
	for _, name := range corruptCopies(path) {
		got = append(got, readFileT(t, name))
	}
	return got
}

// Repeated corrupt loads keep at most three copies per path: the
// newest, distinct ones. A person's own file of a similar name, and the
// copies of another path, are left alone.
func TestCorruptCopiesBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		contents []string
		want     []string // newest first
	}{
		{"keeps 3", []string{"{1", "{2", "{3", "{4", "{5"}, []string{"{5", "{4", "{3"}},
		{"same bytes kept once", []string{"{a", "{a", "{a", "{a"}, []string{"{a"}},
		{"a repeat is newest, older distinct ones stay", []string{"{a", "{b", "{a"}, []string{"{a", "{b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.json")
			mine := filepath.Join(dir, "c.json"+corruptSuffix+"mine")
			other := filepath.Join(dir, "d.json"+corruptSuffix+"20260101T000000.000000000Z")
			for _, p := range []string{mine, other} {
				require.NoError(t, os.WriteFile(p, []byte("keep"), 0o600))
			}
			asides := corruptLoads(t, Options{}, path, tc.contents...)
			assert.Equal(t, tc.want, asideContents(t, path), "the copies kept, newest first")
			assert.FileExists(t, asides[len(asides)-1], "the copy the last Load reported")
			assert.FileExists(t, mine, "a name of another shape is not a copy")
			assert.FileExists(t, other, "another path's copy")
		})
	}
}

// The copy a Load just moved aside is never removed: when an older one
// holds the same bytes, the older one goes; when a copy's name says it is
// newer (the clock was set back since), both stay.
func TestCorruptCopyJustMovedIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	asides := corruptLoads(t, Options{}, path, "{x", "{x")
	assert.NoFileExists(t, asides[0], "the older copy of the same bytes")
	assert.FileExists(t, asides[1], "the copy the last Load named in its error")

	future := path + corruptSuffix + "29991231T235959.000000000Z"
	require.NoError(t, os.WriteFile(future, []byte("{future"), 0o600))
	asides = corruptLoads(t, Options{}, path, "{y")
	assert.FileExists(t, asides[0], "the copy the Load named in its error, behind a later-named one")
	assert.FileExists(t, future, "a later-named copy with other bytes")
}

// With zero Options a failed save reaches slog.Default when it happens,
// before any Flush; a Logger with slog.DiscardHandler silences it. Not
// parallel: it replaces the process's default logger.
func TestDefaultLoggerReportsFailures(t *testing.T) {
	rec := &recordHandler{}
	setDefaultLogger(t, slog.New(rec))

	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	path := filepath.Join(blocker, "state.json") // under a regular file: ENOTDIR

	quiet := NewStore(Options{Logger: slog.New(slog.DiscardHandler)})
	qf, err := Open[doc](quiet, path)
	require.NoError(t, err)
	require.NoError(t, qf.Save(doc{Text: "x"}))
	assert.Error(t, quiet.Flush(t.Context()), "want the save to fail")
	assert.Empty(t, rec.paths(), "Logger set to discard: got records on slog.Default")

	s := NewStore(Options{})
	f, err := Open[doc](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save(doc{Text: "x"}))
	// Wait for the save without Flush, which would report it too: a Load
	// waits for the saves queued before it.
	_, _ = f.Load(context.Background())
	assert.Equal(t, []string{f.Path()}, rec.paths(), "slog.Default records of failed saves, by path")
	assert.Error(t, s.Flush(t.Context()), "Flush still reports it")
}

// recordHandler is a slog.Handler that keeps the "path" of each record.
type recordHandler struct {
	mu  sync.Mutex // protects got
	got []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "path" {
			h.mu.Lock()
			h.got = append(h.got, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h *recordHandler) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// Every error type's text is one line, even when it holds joined errors
// (errors.Join puts newlines between them), so one-line logs stay whole.
func TestErrorTextsOneLine(t *testing.T) {
	joined := errors.Join(errors.New("first"), errors.New("second"))
	cases := map[string]error{
		"corrupt moved":          &CorruptError{Path: "/s.json", Aside: "/s.json.corrupt-x", Err: joined},
		"corrupt moved unsynced": &CorruptError{Path: "/s.json", Aside: "/s.json.corrupt-x", Err: joined, AsideErr: joined},
		"corrupt in place":       &CorruptError{Path: "/s.json", Err: joined, AsideErr: joined},
		"corrupt watched":        &CorruptError{Path: "/s.json", Err: joined},
		"corrupt nil":            &CorruptError{Path: "/s.json"},
		"not drained": &NotDrainedError{
			Pending: []string{"/a", "/b"},
			Failed:  map[string]error{"/c": joined, "/d": fmt.Errorf("wrapped: %w", joined)},
			Err:     errors.Join(context.DeadlineExceeded, errReentrant),
		},
		"locked":   &LockedError{Path: "/s.json", PID: 42},
		"sentinel": errors.Join(ErrClosed, ErrCorrupt, errReentrant, ErrLocked), // each sentinel, checked below
	}
	for name, err := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "sentinel" {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					assert.NotContains(t, e.Error(), "\n", "got %q, want one line", e.Error())
				}
				return
			}
			assert.NotContains(t, err.Error(), "\n", "got %q, want one line", err.Error())
			assert.True(t, strings.HasPrefix(err.Error(), "statefile: "), "got %q, want the package prefix", err.Error())
		})
	}
	ce := cases["corrupt in place"]
	assert.ErrorIs(t, ce, ErrCorrupt)
	assert.ErrorIs(t, ce, joined, "errors.Is sees the decoding and the move's errors")
	nd := cases["not drained"]
	assert.ErrorIs(t, nd, context.DeadlineExceeded)
	assert.ErrorIs(t, nd, errReentrant)
}

// A real corrupt Load's error: one line, matching ErrCorrupt and the
// decoding error, and naming the copy.
func TestCorruptLoadErrorText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(path, []byte("{torn"), 0o600))
	s := NewStore(Options{})
	f, err := Open[doc](s, path)
	require.NoError(t, err)
	_, err = f.Load(context.Background())
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.NoError(t, ce.AsideErr, "the move worked")
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), " moved to "+ce.Aside+": ")
	assert.True(t, bytes.Equal([]byte("{torn"), []byte(readFileT(t, ce.Aside))), "the bytes kept")
	_, statErr := os.Stat(path)
	assert.ErrorIs(t, statErr, fs.ErrNotExist)
}
