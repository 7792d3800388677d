package tmpmount

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestTmpfsFull(t *testing.T) {
	var dir string
	t.Run("mounted", func(t *testing.T) {
		dir = Tmpfs(t, "64k")
		requireMounted(t, dir, true)
		old := filepath.Join(dir, "old")
		require.NoError(t, os.WriteFile(old, []byte("previous"), 0o600))

		err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 128<<10), 0o600)
		assert.ErrorIs(t, err, syscall.ENOSPC, "write beyond size=64k: got %v, want ENOSPC", err)
		b, err := os.ReadFile(old)
		assert.NoError(t, err)
		assert.Equal(t, "previous", string(b), "old file after ENOSPC")

		require.NoError(t, os.Remove(filepath.Join(dir, "big")))
		assert.NoError(t, os.WriteFile(filepath.Join(dir, "small"), make([]byte, 16<<10), 0o600),
			"a write that fits once space is freed")
	})
	requireMounted(t, dir, false)
}

func TestSetReadOnly(t *testing.T) {
	t.Run("tmpfs", func(t *testing.T) {
		var dir string
		t.Run("read-only", func(t *testing.T) {
			dir = Tmpfs(t, "64k")
			testReadOnly(t, dir)
		})
		requireMounted(t, dir, false)
	})
	t.Run("plain directory", func(t *testing.T) {
		dir := t.TempDir()
		t.Run("read-only", func(t *testing.T) { testReadOnly(t, dir) })
		requireMounted(t, dir, false)
		assert.NoError(t, os.WriteFile(filepath.Join(dir, "after"), nil, 0o600), "create after cleanup")
	})
}

func testReadOnly(t *testing.T, dir string) {
	old := filepath.Join(dir, "old")
	require.NoError(t, os.WriteFile(old, []byte("previous"), 0o600))

	SetReadOnly(t, dir, true)
	requireMounted(t, dir, true)
	assertErrno(t, syscall.EROFS, os.WriteFile(filepath.Join(dir, "new"), nil, 0o600), "create")
	assertErrno(t, syscall.EROFS, os.WriteFile(old, []byte("x"), 0o600), "open for writing")
	assertErrno(t, syscall.EROFS, os.Rename(old, filepath.Join(dir, "renamed")), "rename")
	assertErrno(t, syscall.EROFS, os.Remove(old), "remove")
	b, err := os.ReadFile(old)
	assert.NoError(t, err)
	assert.Equal(t, "previous", string(b), "old file while read-only")

	SetReadOnly(t, dir, false)
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "new"), nil, 0o600), "create once writable")
	SetReadOnly(t, dir, true) // left read-only: the cleanup must cope
}

func TestTmpfsBusyCleanup(t *testing.T) {
	tb := &fakeTB{TB: t}
	dir := Tmpfs(tb, "64k")
	f, err := os.Create(filepath.Join(dir, "open"))
	require.NoError(t, err)
	defer f.Close()

	tb.cleanup()
	requireMounted(t, dir, false)
	require.Len(t, tb.errors, 1, "errors from the cleanup of a busy tmpfs")
	assert.Contains(t, tb.errors[0], "detached", "the cleanup's error")
	_, err = f.WriteString("the open file still works")
	assert.NoError(t, err, "write to a file of a detached tmpfs")
}

func TestSetReadOnlyBusy(t *testing.T) {
	dir := Tmpfs(t, "64k")
	f, err := os.Create(filepath.Join(dir, "open"))
	require.NoError(t, err)
	defer f.Close()
	msg := fatalOf(t, func(tb testing.TB) { SetReadOnly(tb, dir, true) })
	assert.Contains(t, msg, "device or resource busy", "SetReadOnly with a file open for writing")
}

func TestSetReadOnlyRefusesForeignMount(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
	defer func() { assert.NoError(t, unix.Unmount(dir, 0)) }()

	msg := fatalOf(t, func(tb testing.TB) { SetReadOnly(tb, dir, true) })
	assert.Contains(t, msg, "did not make", "SetReadOnly on a mount point it did not make")
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "new"), nil, 0o600), "the foreign mount stays writable")
}

func TestSetImmutable(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"tmpfs", func(t *testing.T) string { return Tmpfs(t, "64k") }},
		{"temp directory", func(t *testing.T) string { return t.TempDir() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tc.dir(t), "d")
			require.NoError(t, os.Mkdir(dir, 0o700))
			t.Run("immutable", func(t *testing.T) { testImmutable(t, dir) })
			assert.NoError(t, os.WriteFile(filepath.Join(dir, "after"), nil, 0o600), "create after cleanup")
		})
	}
}

func testImmutable(t *testing.T, dir string) {
	old := filepath.Join(dir, "old")
	require.NoError(t, os.WriteFile(old, []byte("previous"), 0o600))

	SetImmutable(t, dir, true)
	assertErrno(t, syscall.EPERM, os.WriteFile(filepath.Join(dir, "new"), nil, 0o600), "create")
	assertErrno(t, syscall.EPERM, os.Rename(old, filepath.Join(dir, "renamed")), "rename")
	assertErrno(t, syscall.EPERM, os.Remove(old), "remove")
	assert.ErrorIs(t, os.Remove(old), fs.ErrPermission, "remove")
	assert.NoError(t, os.WriteFile(old, []byte("in place"), 0o600), "a write in place")

	SetImmutable(t, old, true)
	assertErrno(t, syscall.EPERM, os.WriteFile(old, []byte("x"), 0o600), "open an immutable file for writing")
	SetImmutable(t, old, false)

	SetImmutable(t, dir, false)
	assert.NoError(t, os.WriteFile(filepath.Join(dir, "new"), nil, 0o600), "create once cleared")
	SetImmutable(t, dir, true) // left set: the cleanup must clear it
}

func TestMountedWithSpace(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(t.TempDir(), "a b")
	require.NoError(t, os.Mkdir(dir, 0o700))
	requireMounted(t, dir, false)
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
	defer func() { assert.NoError(t, unix.Unmount(dir, 0)) }()
	requireMounted(t, dir, true)
}

func assertErrno(t *testing.T, want syscall.Errno, err error, what string) {
	t.Helper()
	assert.ErrorIs(t, err, want, "%s: got %v, want %v", what, err, want)
}

func requireMounted(t *testing.T, dir string, want bool) {
	t.Helper()
	got, err := Mounted(dir)
	require.NoError(t, err)
	require.Equal(t, want, got, "Mounted(%s)", dir)
}

// fatalOf runs fn with a fake testing.TB whose Fatal and Fatalf end fn,
// as the real ones end the test, and returns the message, or fails t if
// fn did not call them.
func fatalOf(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	tb := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	tb.cleanup()
	if tb.fatal == "" {
		t.Errorf("fatalOf: got no call of Fatal, want one")
	}
	return tb.fatal
}

// fakeTB records fatal errors, errors and cleanups, and passes the rest
// (Helper, TempDir, Skip) to the real test. Its fields are used by one
// goroutine at a time.
type fakeTB struct {
	testing.TB
	fatal    string
	errors   []string
	cleanups []func()
}

func (tb *fakeTB) Fatal(args ...any) {
	tb.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func (tb *fakeTB) Fatalf(format string, args ...any) {
	tb.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (tb *fakeTB) Error(args ...any) { tb.errors = append(tb.errors, fmt.Sprint(args...)) }

func (tb *fakeTB) Errorf(format string, args ...any) {
	tb.errors = append(tb.errors, fmt.Sprintf(format, args...))
}

func (tb *fakeTB) Cleanup(fn func()) { tb.cleanups = append(tb.cleanups, fn) }

// cleanup runs the cleanups, last registered first, as testing does.
func (tb *fakeTB) cleanup() {
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
	tb.cleanups = nil
}
