//go:build linux

package keyedtest

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/statefile"
)

// Keyed is a drafts or anchors Store as the read cases use it.
type Keyed interface {
	Store
	Load(ctx context.Context) error
	Loaded() <-chan struct{}
}

// Subject is a keyed store under test, seen as one string per key (a
// draft's text, a place's item).
type Subject struct {
	Name string // the file's name: "drafts.json"
	Open func(t *testing.T, st *statefile.Store, path string) Keyed
	Set  func(s Keyed, key, value string)
	Get  func(s Keyed, key string) (string, bool)
}

// Cause is a real reason a file cannot be read, which goes away.
type Cause struct {
	Name  string
	Errno syscall.Errno // what the read meets
	// Break makes the file at path unreadable. The file may exist, holding
	// an earlier session's save.
	Break func(t *testing.T, path string)
	// Mend takes the cause away; write then puts the earlier session's
	// save at path if the cause had no room for it (a directory where the
	// file goes).
	Mend func(t *testing.T, path string, write func())
}

// IsDir is a directory where the file goes: read(2) fails with EISDIR.
// It needs no privilege, and binds root too.
var IsDir = Cause{
	Name: "EISDIR", Errno: syscall.EISDIR,
	Break: func(t *testing.T, path string) {
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Mkdir(path, 0o700))
	},
	Mend: func(t *testing.T, path string, write func()) {
		require.NoError(t, os.Remove(path))
		write()
	},
}

// NoAccess is a directory of mode 0: open(2) fails with EACCES. Root passes
// permission bits (CAP_DAC_OVERRIDE), so run it through [Unprivileged].
var NoAccess = Cause{
	Name: "EACCES", Errno: syscall.EACCES,
	Break: func(t *testing.T, path string) {
		dir := filepath.Dir(path)
		require.NoError(t, os.Chmod(dir, 0))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) }) // or t.TempDir cannot remove it
	},
	Mend: func(t *testing.T, path string, write func()) {
		require.NoError(t, os.Chmod(filepath.Dir(path), 0o700))
	},
}

// ReadRecovers checks what a keyed store does over a file that cannot be
// read at Open, for a real cause that then goes away: Load returns the
// read's error and Loaded stays open; the edits made meanwhile stay in
// memory and are not saved (Flush says why), and the file is not
// overwritten; once the cause is gone the store reads the file again by
// itself, merges what it held under the edits, saves, closes Loaded, and
// Load returns nil; a fresh store then reads both.
func ReadRecovers(t *testing.T, sub Subject, cause Cause) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, sub.Name)
	earlier := func() { // an earlier session's save
		st := NewStatefile(t)
		s := sub.Open(t, st, path)
		sub.Set(s, "old", "from the file")
		require.NoError(t, s.Close(t.Context()))
	}
	earlier()
	cause.Break(t, path)

	st := NewStatefile(t)
	s := sub.Open(t, st, path)
	err := s.Load(t.Context())
	require.ErrorIs(t, err, cause.Errno, "Load: got %v, want the read's error", err)
	assert.ErrorContains(t, err, "not saving until the file can be read")
	sub.Set(s, "new", "typed meanwhile")
	err = s.Flush(t.Context())
	require.ErrorIs(t, err, cause.Errno, "Flush while the file cannot be read: got %v", err)
	select {
	case <-s.Loaded():
		t.Fatal("Loaded closed while the file cannot be read")
	default:
	}
	got, ok := sub.Get(s, "new")
	assert.True(t, ok && got == "typed meanwhile", "the edit, in memory: got %q, %t", got, ok)

	cause.Mend(t, path, earlier)
	// The timed read: within the backoff reached so far (a few reads, so
	// about a second); the bound only ends a broken test.
	timer := time.NewTimer(2 * time.Minute)
	defer timer.Stop()
	select {
	case <-s.Loaded():
	case <-timer.C:
		t.Fatal("the store did not read the file again within 2 minutes of the cause going away")
	}
	require.NoError(t, s.Load(t.Context()), "Load after the file was read")
	require.NoError(t, s.Flush(t.Context()), "Flush after the file was read")
	for key, want := range map[string]string{"old": "from the file", "new": "typed meanwhile"} {
		got, ok := sub.Get(s, key)
		assert.True(t, ok && got == want, "%s in memory: got %q, %t, want %q", key, got, ok, want)
	}
	require.NoError(t, s.Close(t.Context()))

	again := sub.Open(t, NewStatefile(t), path)
	require.NoError(t, again.Load(t.Context()))
	for key, want := range map[string]string{"old": "from the file", "new": "typed meanwhile"} {
		got, ok := sub.Get(again, key)
		assert.True(t, ok && got == want, "%s in a fresh store: got %q, %t, want %q", key, got, ok, want)
	}
	require.NoError(t, again.Close(t.Context()))
}

// unprivilegedEnv marks a test binary that [Unprivileged] re-ran.
const unprivilegedEnv = "OFFMAIN_KEYEDTEST_UNPRIVILEGED"

// Unprivileged makes the calling test run without root's privileges. Run
// by a normal user, or in the child it starts, it returns true and the
// test goes on. Run by root, it re-runs the test in a child process as
// uid and gid 65534 (nobody, nogroup), waits for it, fails the test if the
// child failed, and returns false: the caller then returns. The child runs
// a copy of the test binary, since go test leaves the binary in a work
// directory of mode 0700 that nobody cannot enter.
func Unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Getuid() != 0 || os.Getenv(unprivilegedEnv) == "1" {
		return true
	}
	const nobody = 65534
	top, err := os.MkdirTemp("", "keyedtest-nobody") // not t.TempDir: its parent is 0700
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, os.RemoveAll(top)) })
	require.NoError(t, os.Chmod(top, 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(top, filepath.Base(exe))
	copyFile(t, exe, bin)
	work := filepath.Join(top, "work")
	require.NoError(t, os.Mkdir(work, 0o700))
	require.NoError(t, os.Chown(work, nobody, nobody))

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), unprivilegedEnv+"=1", "TMPDIR="+work, "HOME="+work, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", nobody, out)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("the test as uid %d failed: %v", nobody, err)
	}
	require.NoError(t, err)
	return false
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}
