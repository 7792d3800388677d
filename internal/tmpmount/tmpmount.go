//go:build linux

package tmpmount

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
)

// fsImmutableFL is FS_IMMUTABLE_FL from linux/fs.h, which x/sys/unix lacks.
const fsImmutableFL = 0x10

var (
	mu   sync.Mutex          // protects made
	made = map[string]bool{} // mount points this package mounted and has not unmounted yet
)

// Tmpfs mounts a new tmpfs on a new temporary directory and returns the
// directory. size is the tmpfs size= option: bytes with an optional k, m
// or g suffix, such as "64k" (tmpfs rounds it up to whole pages). Writes
// beyond it fail with ENOSPC. It is unmounted when the test and its
// subtests complete.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	requireRoot(t)
	if size == "" || strings.ContainsAny(size, ", ") {
		t.Fatalf("tmpmount: Tmpfs(%q): want a size such as \"64k\"", size)
	}
	dir := t.TempDir()
	err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size="+size)
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("tmpmount: mounting is forbidden on this machine: %v", err)
	}
	if err != nil {
		t.Fatalf("tmpmount: mount tmpfs size=%s on %s: %v", size, dir, err)
	}
	track(t, dir)
	return dir
}

// SetReadOnly makes the mount at dir read-only, so that creating,
// writing, renaming or removing anything under it fails with EROFS, or
// writable again. dir is a directory from [Tmpfs], or any directory that
// is not a mount point: the first SetReadOnly(t, dir, true) bind-mounts
// it onto itself, which is undone when the test completes. Making a mount
// read-only fails while a file under it is open for writing. SetReadOnly
// refuses a mount point it did not make, so that a mistake cannot turn a
// system directory read-only.
func SetReadOnly(t testing.TB, dir string, readOnly bool) {
	t.Helper()
	requireRoot(t)
	dir = canonical(dir)
	if !isMade(dir) {
		mounted, err := Mounted(dir)
		switch {
		case err != nil:
			t.Fatal(err)
		case mounted:
			t.Fatalf("tmpmount: %s is a mount point tmpmount did not make: refusing to change it", dir)
		case !readOnly:
			return // as writable as the filesystem it is on
		}
		err = unix.Mount(dir, dir, "", unix.MS_BIND, "")
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("tmpmount: mounting is forbidden on this machine: %v", err)
		}
		if err != nil {
			t.Fatalf("tmpmount: bind %s onto itself: %v", dir, err)
		}
		track(t, dir)
	}
	// mount_setattr(2) changes the one flag and keeps the others (nosuid,
	// nodev...), which a MS_REMOUNT|MS_BIND remount would reset.
	attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if readOnly {
		attr = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, dir, 0, &attr); err != nil {
		t.Fatalf("tmpmount: set %s read-only=%t: %v", dir, readOnly, err)
	}
}

// SetImmutable sets or clears the immutable attribute (FS_IMMUTABLE_FL,
// as chattr +i) of the file or directory at path. While it is set, even
// root gets EPERM from creating, renaming or removing an entry in the
// directory, and from opening the file for writing; files already in the
// directory stay writable in place. It is cleared when the test
// completes. SetImmutable skips the test if the filesystem has no such
// attribute: use a directory on a [Tmpfs] (Linux 6.0 and later) or ext4.
func SetImmutable(t testing.TB, path string, immutable bool) {
	t.Helper()
	requireRoot(t)
	err := setImmutable(path, immutable)
	switch {
	case errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EOPNOTSUPP):
		t.Skipf("tmpmount: the filesystem of %s has no immutable attribute: %v", path, err)
	case errors.Is(err, syscall.EPERM):
		t.Skipf("tmpmount: setting the immutable attribute needs CAP_LINUX_IMMUTABLE: %v", err)
	case err != nil:
		t.Fatal(err)
	}
	if immutable {
		t.Cleanup(func() {
			if err := setImmutable(path, false); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Error(err)
			}
		})
	}
}

func setImmutable(path string, immutable bool) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return &os.PathError{Op: "ioctl FS_IOC_GETFLAGS", Path: path, Err: err}
	}
	if immutable {
		flags |= fsImmutableFL
	} else {
		flags &^= fsImmutableFL
	}
	if err := unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags)); err != nil {
		return &os.PathError{Op: "ioctl FS_IOC_SETFLAGS", Path: path, Err: err}
	}
	return nil
}

func requireRoot(t testing.TB) {
	t.Helper()
	if euid := os.Geteuid(); euid != 0 {
		t.Skipf("tmpmount: mounting needs root; euid is %d", euid)
	}
}

// track records dir as mounted by this package and unmounts it when t
// completes. If the mount is busy, it is detached, so that nothing stays
// mounted, and t fails.
func track(t testing.TB, dir string) {
	mu.Lock()
	made[dir] = true
	mu.Unlock()
	t.Cleanup(func() {
		defer func() {
			mu.Lock()
			delete(made, dir)
			mu.Unlock()
		}()
		err := unix.Unmount(dir, 0)
		if err == nil {
			return
		}
		if derr := unix.Unmount(dir, unix.MNT_DETACH); derr != nil {
			t.Errorf("tmpmount: unmount %s: %v; detach: %v", dir, err, derr)
			return
		}
		t.Errorf("tmpmount: unmount %s: %v: a file was still open under it; detached", dir, err)
	})
}

func isMade(dir string) bool {
	mu.Lock()
	defer mu.Unlock()
	return made[dir]
}

// canonical returns dir as mountinfo shows it: absolute, clean, with
// symbolic links resolved where it exists.
func canonical(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	return dir
}

// Mounted reports whether dir is a mount point of this process's mount
// namespace, according to /proc/self/mountinfo (proc(5)).
func Mounted(dir string) (bool, error) {
	ms, err := mountinfo.Read()
	if err != nil {
		return false, fmt.Errorf("tmpmount: %w", err)
	}
	_, ok := mountinfo.Top(ms, canonical(dir))
	return ok, nil
}
