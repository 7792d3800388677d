//go:build windows

package statefile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// holdExclusive opens name as a program that shares nothing does (an
// editor, a backup tool); release closes it. Both are safe to call twice.
func holdExclusive(t *testing.T, name string) (release func()) {
	t.Helper()
	p, err := windows.UTF16PtrFromString(name)
	require.NoError(t, err)
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	require.NoError(t, err)
	closed := false
	release = func() {
		if !closed {
			closed = true
			windows.CloseHandle(h)
		}
	}
	t.Cleanup(release)
	return release
}

// onRetry sets shareRetried for the test and counts the retries.
func onRetry(t *testing.T, fn func(err error)) *int {
	n := new(int)
	shareRetried = func(err error) {
		*n++
		fn(err)
	}
	t.Cleanup(func() { shareRetried = nil })
	return n
}

// A Load while another program has the file open sharing nothing gets a
// sharing violation from the open; it retries until the program lets go.
// (os.ReadFile, which Load used, failed at once.)
func TestLoadRetriesSharingViolation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`"kept"`+"\n"), 0o600))
	release := holdExclusive(t, path)
	retries := onRetry(t, func(err error) {
		assert.ErrorIs(t, err, windows.ERROR_SHARING_VIOLATION, "the error retried")
		release()
	})
	f, err := Open[string](NewStore(Options{}), path)
	require.NoError(t, err)
	got, err := f.Load(context.Background())
	require.NoError(t, err, "Load while another program held the file")
	assert.Equal(t, "kept", got)
	assert.Equal(t, 1, *retries, "retries: got %d, want 1", *retries)
}

// A Load whose file stays held gives up after shareRetryBudget with the
// sharing violation.
func TestLoadGivesUpAfterBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`"kept"`+"\n"), 0o600))
	holdExclusive(t, path)
	retries := onRetry(t, func(error) {})
	f, err := Open[string](NewStore(Options{}), path)
	require.NoError(t, err)
	start := time.Now()
	_, err = f.Load(context.Background())
	took := time.Since(start)
	assert.ErrorIs(t, err, windows.ERROR_SHARING_VIOLATION)
	assert.GreaterOrEqual(t, took, shareRetryBudget, "Load gave up after %v: want the whole budget", took)
	t.Logf("Load gave up after %v and %d retries (budget %v)", took, *retries, shareRetryBudget)
}

// A save whose destination another process has open (a reader that did
// not share delete, as os.ReadFile does not) cannot be replaced: the move
// retries until the reader closes it.
func TestMoveRetriesWhileDestinationOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`"old"`+"\n"), 0o600))
	reader, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { reader.Close() })
	var seen error
	retries := onRetry(t, func(err error) {
		if seen == nil {
			seen = err
			reader.Close()
		}
	})
	s := NewStore(Options{})
	f, err := Open[string](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save("new"))
	require.NoError(t, f.Flush(context.Background()), "save while a reader had the file open")
	assert.True(t, retryable(seen), "the error retried: got %v, want a sharing or access error", seen)
	t.Logf("move retried %d times on %v", *retries, seen)
	assert.Equal(t, `"new"`+"\n", readFileT(t, path))
	require.NoError(t, s.Close(context.Background()))
}

// A save whose destination stays held fails whole after shareRetryBudget:
// reported to OnError and Flush, the file as it was, no temp file left.
func TestMoveFailsWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(path, []byte(`"old"`+"\n"), 0o600))
	reader, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { reader.Close() })
	var reported error
	s := NewStore(Options{OnError: func(err error) { reported = err }})
	f, err := Open[string](s, path)
	require.NoError(t, err)
	require.NoError(t, f.Save("new"))
	start := time.Now()
	err = f.Flush(context.Background())
	took := time.Since(start)
	require.Error(t, err, "Flush of a save whose destination stayed open")
	assert.True(t, retryable(reported), "OnError: got %v, want the sharing or access error", reported)
	assert.GreaterOrEqual(t, took, shareRetryBudget, "the save gave up after %v: want the whole budget", took)
	t.Logf("save gave up after %v: %v", took, reported)
	reader.Close()
	assert.Equal(t, `"old"`+"\n", readFileT(t, path), "the file as it was")
	assert.Equal(t, []string{"s.json"}, dirNames(t, dir), "no temp file left")
	require.NoError(t, s.Close(context.Background()))
}
