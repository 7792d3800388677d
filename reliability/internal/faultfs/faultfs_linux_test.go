package faultfs_test

import (
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
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/reliability/internal/fusemount"
)

func TestLoopback(t *testing.T) {
	fsys := faultfs.MountT(t)
	requireMounted(t, fsys.Dir(), true)
	// Served by a helper process: a process must not use a FUSE mount it
	// serves itself (go-fuse's fs/api.go, "Deadlocks").
	self, err := fusemount.ServesFUSE(os.Getpid())
	require.NoError(t, err)
	assert.False(t, self, "this process holds a /dev/fuse descriptor: it serves the mount it uses")
	p := filepath.Join(fsys.Dir(), "sub", "a.json")
	require.NoError(t, os.Mkdir(filepath.Dir(p), 0o700))

	f, err := os.OpenFile(p+".tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString("hello")
	assert.NoError(t, err, "write")
	assert.NoError(t, f.Sync(), "fsync")
	assert.NoError(t, f.Close(), "close")
	assert.NoError(t, os.Rename(p+".tmp", p), "rename")
	assert.NoError(t, syncDir(filepath.Dir(p)), "fsync of the directory")

	assertContent(t, p, "hello")
	assertContent(t, filepath.Join(fsys.Backing(), "sub", "a.json"), "hello")
	names, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	require.Len(t, names, 1, "entries of sub/")
	assert.Equal(t, "a.json", names[0].Name(), "entry of sub/")

	// No caching: a change to the backing directory shows at once.
	require.NoError(t, os.WriteFile(filepath.Join(fsys.Backing(), "sub", "a.json"), []byte("changed behind"), 0o600))
	assertContent(t, p, "changed behind")
	require.NoError(t, os.Remove(filepath.Join(fsys.Backing(), "sub", "a.json")))
	_, err = os.Stat(p)
	assert.ErrorIs(t, err, os.ErrNotExist, "stat after removal from the backing directory")
}

// TestFail checks that each fault is the result of the system call it
// names, on the first try, and that clearing it restores that call.
func TestFail(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    faultfs.Op
		errno syscall.Errno
		call  func(t *testing.T, dir string) error // the faulted system call, on dir/old which holds "old"
	}{
		{"write", faultfs.Write, syscall.EIO, func(t *testing.T, dir string) error {
			return withFile(t, filepath.Join(dir, "old"), os.O_WRONLY, func(f *os.File) error {
				_, err := f.WriteAt([]byte("new"), 0)
				return err
			})
		}},
		{"write ENOSPC", faultfs.Write, syscall.ENOSPC, func(t *testing.T, dir string) error {
			return withFile(t, filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE, func(f *os.File) error {
				_, err := f.Write(make([]byte, 1<<20)) // more than one FUSE_WRITE
				return err
			})
		}},
		{"copy_file_range", faultfs.Write, syscall.EIO, func(t *testing.T, dir string) error {
			src, err := os.Open(filepath.Join(dir, "old"))
			require.NoError(t, err)
			defer src.Close()
			return withFile(t, filepath.Join(dir, "copy"), os.O_WRONLY|os.O_CREATE, func(f *os.File) error {
				_, err := io.Copy(f, src) // copy_file_range(2), refused, then splice
				return err
			})
		}},
		{"fsync", faultfs.Fsync, syscall.EIO, func(t *testing.T, dir string) error {
			return withFile(t, filepath.Join(dir, "old"), os.O_RDWR, (*os.File).Sync)
		}},
		{"fsync directory", faultfs.Fsync, syscall.EIO, func(t *testing.T, dir string) error {
			return syncDir(dir)
		}},
		{"rename", faultfs.Rename, syscall.EXDEV, func(t *testing.T, dir string) error {
			return os.Rename(filepath.Join(dir, "old"), filepath.Join(dir, "renamed"))
		}},
		{"close", faultfs.Close, syscall.EDQUOT, func(t *testing.T, dir string) error {
			f, err := os.Open(filepath.Join(dir, "old"))
			require.NoError(t, err)
			return f.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := faultfs.MountT(t)
			old := filepath.Join(fsys.Dir(), "old")
			require.NoError(t, os.WriteFile(old, []byte("old"), 0o600))

			clear := fsys.Fail(tc.op, tc.errno, nil)
			err := tc.call(t, fsys.Dir())
			assert.ErrorIs(t, err, tc.errno, "%s with a %v fault: got %v, want %v", tc.name, tc.op, err, tc.errno)
			assertContent(t, old, "old")
			assertContent(t, filepath.Join(fsys.Backing(), "old"), "old")

			clear()
			clear() // idempotent
			assert.NoError(t, tc.call(t, fsys.Dir()), "%s once cleared", tc.name)
		})
	}
}

func TestFailMatch(t *testing.T) {
	fsys := faultfs.MountT(t)
	dir := fsys.Dir()
	fsys.Fail(faultfs.Write, syscall.EIO, faultfs.Base("a.json"))
	fsys.Fail(faultfs.Fsync, syscall.EIO, faultfs.Base("a.json"))
	fsys.Fail(faultfs.Rename, syscall.EIO, faultfs.Base("a.json"))

	for _, tc := range []struct {
		name string
		want error
	}{
		{"a.json", syscall.EIO},
		{".a.json2718281828", syscall.EIO},
		{"b.json", nil},
		{".b.json31415", nil},
		{"xa.json", nil},
	} {
		err := os.WriteFile(filepath.Join(dir, tc.name), []byte("x"), 0o600)
		assert.ErrorIs(t, err, tc.want, "write %s: got %v, want %v", tc.name, err, tc.want)
		err = withFile(t, filepath.Join(dir, tc.name), os.O_RDONLY, (*os.File).Sync)
		assert.ErrorIs(t, err, tc.want, "fsync %s: got %v, want %v", tc.name, err, tc.want)
	}
	assert.NoError(t, syncDir(dir), "fsync of the directory, which Base does not select")
	assert.ErrorIs(t, os.Rename(filepath.Join(dir, "b.json"), filepath.Join(dir, "a.json")), syscall.EIO,
		"rename onto a selected path")
	assert.NoError(t, os.Rename(filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")), "rename of other paths")

	clearWrite := fsys.Fail(faultfs.Write, syscall.ENOSPC, nil)
	assert.ErrorIs(t, os.WriteFile(filepath.Join(dir, "a.json"), []byte("x"), 0o600), syscall.ENOSPC, "the failure set last applies")
	clearWrite()
	assert.ErrorIs(t, os.WriteFile(filepath.Join(dir, "a.json"), []byte("x"), 0o600), syscall.EIO, "the earlier failure applies again")
}

func TestBase(t *testing.T) {
	m := faultfs.Base("a.json")
	for p, want := range map[string]bool{
		"a.json":              true,
		"sub/a.json":          true,
		".a.json123":          true,
		"sub/dir/.a.json9":    true,
		"a.jsonx":             false,
		"b.json":              false,
		".":                   false,
		"a.json/b":            false,
		"sub/.b.json123":      false,
		"sub/x.a.json":        false,
		"sub/.a.json.partial": true,
	} {
		assert.Equal(t, want, m.Matches(p), "Base(a.json).Matches(%q)", p)
	}
}

func TestPathAndGlob(t *testing.T) {
	for _, tc := range []struct {
		m    faultfs.Match
		path string
		want bool
	}{
		{faultfs.Path("."), ".", true},
		{faultfs.Path("."), "a.json", false},
		{faultfs.Path("sub/a.json"), "sub/a.json", true},
		{faultfs.Path("sub//a.json"), "sub/a.json", true},
		{faultfs.Path("sub/a.json"), "a.json", false},
		{faultfs.Glob("*.json"), "a.json", true},
		{faultfs.Glob("*.json"), "sub/a.json", false},
		{faultfs.Glob("sub/.*"), "sub/.a.json123", true},
		{faultfs.Glob("sub/.*"), "sub/a.json", false},
	} {
		assert.Equal(t, tc.want, tc.m.Matches(tc.path), "%+v.Matches(%q)", tc.m, tc.path)
	}
	assert.Panics(t, func() { faultfs.Glob("[") }, "a malformed pattern")

	// Through the mount: Path(".") fails the fsync of the root directory
	// only, Glob the files it matches only.
	fsys := faultfs.MountT(t)
	require.NoError(t, os.Mkdir(filepath.Join(fsys.Dir(), "sub"), 0o700))
	fsys.Fail(faultfs.Fsync, syscall.EIO, faultfs.Path("."))
	fsys.Fail(faultfs.Write, syscall.ENOSPC, faultfs.Glob("sub/*.json"))
	assert.ErrorIs(t, syncDir(fsys.Dir()), syscall.EIO, "fsync of the root")
	assert.NoError(t, syncDir(filepath.Join(fsys.Dir(), "sub")), "fsync of sub")
	assert.ErrorIs(t, os.WriteFile(filepath.Join(fsys.Dir(), "sub", "a.json"), []byte("x"), 0o600), syscall.ENOSPC, "write of sub/a.json")
	assert.NoError(t, os.WriteFile(filepath.Join(fsys.Dir(), "a.json"), []byte("x"), 0o600), "write of a.json")
}

func TestFailENOSYSPanics(t *testing.T) {
	fsys := faultfs.MountT(t)
	assert.Panics(t, func() { fsys.Fail(faultfs.Fsync, syscall.ENOSYS, nil) }, "Fail with ENOSYS")
	assert.Panics(t, func() { fsys.Fail(faultfs.Fsync, 0, nil) }, "Fail with errno 0")
}

// TestHang checks that a hung fsync blocks until its release and blocks
// nothing else: other files, the directory, reads of the hung file.
func TestHang(t *testing.T) {
	fsys := faultfs.MountT(t)
	dir := fsys.Dir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	require.NoError(t, os.WriteFile(a, []byte("a"), 0o600))
	h := fsys.Hang(faultfs.Fsync, faultfs.Base("a.json"))

	done := make(chan error, 1)
	go func() { done <- withFile(t, a, os.O_RDWR, (*os.File).Sync) }()
	<-h.Blocked()

	// While a's fsync hangs: a save of b, by temp file and rename, and a
	// read of a.
	tmp := filepath.Join(dir, ".b.json123")
	require.NoError(t, withFile(t, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, func(f *os.File) error {
		_, err := f.WriteString("b")
		return err
	}))
	assert.NoError(t, withFile(t, tmp, os.O_RDONLY, (*os.File).Sync), "fsync of another file")
	assert.NoError(t, os.Rename(tmp, b), "rename in the same directory")
	assert.NoError(t, syncDir(dir), "fsync of the directory")
	assertContent(t, b, "b")
	assertContent(t, a, "a")
	_, err := os.ReadDir(dir)
	assert.NoError(t, err, "readdir")

	select {
	case err := <-done:
		t.Fatalf("fsync of a returned %v before the release, want it blocked", err)
	default:
	}
	h.Release()
	assert.NoError(t, <-done, "fsync of a after the release")
	h.Release() // idempotent
	assert.NoError(t, withFile(t, a, os.O_RDWR, (*os.File).Sync), "fsync of a once released")
}

func TestHangThenFail(t *testing.T) {
	for _, tc := range []struct {
		name       string
		clearFirst bool
		want       error
	}{
		{"failure kept", false, syscall.EIO},
		{"failure cleared while hung", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := faultfs.MountT(t)
			p := filepath.Join(fsys.Dir(), "f")
			require.NoError(t, os.WriteFile(p, nil, 0o600))
			h := fsys.Hang(faultfs.Write, nil)
			clear := fsys.Fail(faultfs.Write, syscall.EIO, nil)

			done := make(chan error, 1)
			go func() { done <- os.WriteFile(p, []byte("x"), 0o600) }()
			<-h.Blocked()
			if tc.clearFirst {
				clear()
			}
			h.Release()
			err := <-done
			assert.ErrorIs(t, err, tc.want, "write after the release: got %v, want %v", err, tc.want)
		})
	}
}

// TestHangInterrupted checks that a process killed while hung dies
// without a release: the kernel waits for the daemon's reply to a request
// it has sent, even for SIGKILL (request_wait_answer in fs/fuse/dev.c).
func TestHangInterrupted(t *testing.T) {
	if p := os.Getenv("FAULTFS_TEST_FSYNC"); p != "" {
		err := withFile(t, p, os.O_RDWR, (*os.File).Sync)
		t.Fatalf("fsync returned %v, want to be killed while hung", err)
	}
	fsys := faultfs.MountT(t)
	p := filepath.Join(fsys.Dir(), "a")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	h := fsys.Hang(faultfs.Fsync, nil)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHangInterrupted$")
	cmd.Env = append(os.Environ(), "FAULTFS_TEST_FSYNC="+p)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-h.Blocked():
	case err := <-exited:
		t.Fatalf("child exited with %v before its fsync hung", err)
	}
	require.NoError(t, cmd.Process.Kill())

	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case err := <-exited:
		assert.ErrorContains(t, err, "killed", "the child's exit")
	case <-deadline.C:
		h.Release()
		<-exited
		t.Fatal("the killed child stayed in fsync until the release, want it to die at once")
	}
}

func TestUnmountWhileHung(t *testing.T) {
	backing, dir := t.TempDir(), t.TempDir()
	fsys := mount(t, dir, backing)
	p := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	h := fsys.Hang(faultfs.Fsync, nil)

	done := make(chan error, 1)
	go func() { done <- withFile(t, p, os.O_RDWR, (*os.File).Sync) }()
	<-h.Blocked()
	assert.NoError(t, fsys.Unmount(), "unmount while fsync hangs")
	assert.NoError(t, <-done, "the hung fsync, released by the unmount")
	requireMounted(t, dir, false)
	assert.NoError(t, fsys.Unmount(), "a second unmount")
	h.Release() // after the unmount: no effect
}

func TestUnmountBusy(t *testing.T) {
	backing, dir := t.TempDir(), t.TempDir()
	fsys := mount(t, dir, backing)
	f, err := os.Create(filepath.Join(dir, "open"))
	require.NoError(t, err)
	defer f.Close()

	uerr := fsys.Unmount()
	assert.ErrorIs(t, uerr, syscall.EBUSY, "unmount with a descriptor open")
	requireMounted(t, dir, false)
	_, err = f.WriteString("x")
	assert.ErrorIs(t, err, syscall.ENOTCONN, "write to a descriptor of the aborted mount")
	assert.Equal(t, uerr, fsys.Unmount(), "a second unmount returns the same")
}

// A helper that dies takes the mount with it: a hung operation fails with
// ECONNABORTED and later ones with ENOTCONN (fuse_abort_conn in
// fs/fuse/dev.c), every Blocked channel is closed, the calls after it do
// nothing, and Unmount detaches the mount and says the helper exited.
func TestHelperDies(t *testing.T) {
	backing, dir := t.TempDir(), t.TempDir()
	fsys := mount(t, dir, backing)
	p := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	h := fsys.Hang(faultfs.Fsync, faultfs.Base("a"))
	idle := fsys.Hang(faultfs.Write, faultfs.Base("b")) // blocks nothing
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- f.Sync() }()
	<-h.Blocked()

	require.NoError(t, syscall.Kill(faultfs.HelperPid(fsys), syscall.SIGKILL))
	assert.ErrorIs(t, <-done, syscall.ECONNABORTED, "the hung fsync once the helper died")
	assert.ErrorIs(t, f.Close(), syscall.ENOTCONN, "a close after it")
	<-idle.Blocked() // closed at the helper's exit
	fsys.Fail(faultfs.Write, syscall.EIO, nil)
	h.Release()
	err = fsys.Unmount()
	assert.ErrorIs(t, err, fusemount.ErrHelperExited, "Unmount after the helper died")
	requireMounted(t, dir, false)
}

func TestMountTUnmounts(t *testing.T) {
	var dir string
	t.Run("mounted", func(t *testing.T) {
		dir = faultfs.MountT(t).Dir()
		requireMounted(t, dir, true)
	})
	requireMounted(t, dir, false)
}

func TestTmpfile(t *testing.T) {
	fsys := faultfs.MountT(t)
	fsys.Fail(faultfs.Write, syscall.EIO, nil)
	fd, err := unix.Open(fsys.Dir(), unix.O_TMPFILE|unix.O_RDWR, 0o600)
	require.NoError(t, err, "open O_TMPFILE")
	f := os.NewFile(uintptr(fd), "tmpfile")
	defer f.Close()
	_, err = f.Write([]byte("x"))
	assert.ErrorIs(t, err, syscall.EIO, "write to an O_TMPFILE file")
}

// mount mounts without MountT, for the tests of Unmount itself; the
// cleanup unmounts in case the test did not get that far.
func mount(t *testing.T, dir, backing string) *faultfs.FS {
	t.Helper()
	fsys, err := faultfs.Mount(dir, backing)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("FUSE cannot mount here: %v", err) // as MountT
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = fsys.Unmount() })
	return fsys
}

// withFile opens path with flag, calls fn, closes the file and returns
// fn's error: the error of the system call fn makes, not of a later one.
// An error of open or close fails t.
func withFile(t *testing.T, path string, flag int, fn func(*os.File) error) error {
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		t.Errorf("open %s: %v", path, err)
		return err
	}
	err = fn(f)
	assert.NoError(t, f.Close(), "close %s", path)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func assertContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	assert.NoError(t, err)
	assert.Equal(t, want, string(b), "content of %s", path)
}

func requireMounted(t *testing.T, dir string, want bool) {
	t.Helper()
	got, err := tmpmount.Mounted(dir)
	require.NoError(t, err)
	require.Equal(t, want, got, "mounted %s", dir)
}
