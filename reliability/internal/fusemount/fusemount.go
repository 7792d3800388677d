//go:build linux

package fusemount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/oneline"
)

// Options returns a filesystem's mount options: the kernel's entry,
// attribute and negative-lookup caches off, so every lookup and stat
// reaches the daemon, and mount(2) called directly. name prefixes errors
// and names the mount's type in /proc/mounts; backing is its source.
func Options(name, backing string) *gofs.Options {
	var zero time.Duration
	return &gofs.Options{
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, // mount(2) itself: there is no fusermount to fall back on
			FsName:            backing,
			Name:              name,
		},
	}
}

// A Mount is a FUSE mount served by this process: by a helper, see
// [Serve].
type Mount struct {
	name, dir string
	server    *fuse.Server
	served    chan struct{} // closed when the serve loop has ended

	once sync.Once
	err  error
}

// Serve mounts root at mountpoint with opts (see [Options]) and serves it
// from this process until [Mount.Unmount]. Errors start with opts.Name.
// It is for a [ServeFunc], in a helper process: the process that serves a
// mount must not make system calls on it (see the package documentation).
func Serve(mountpoint string, root gofs.InodeEmbedder, opts *gofs.Options) (*Mount, error) {
	m := &Mount{name: opts.Name, dir: mountpoint, served: make(chan struct{})}
	server, err := fuse.NewServer(gofs.NewNodeFS(root, opts), mountpoint, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("%s: mount %s: %w", m.name, mountpoint, err)
	}
	m.server = server
	go func() {
		defer close(m.served)
		server.Serve()
	}()
	if err := server.WaitMount(); err != nil {
		return nil, oneline.Join(fmt.Errorf("%s: mount %s: %w", m.name, mountpoint, err), m.Unmount())
	}
	return m, nil
}

// Unmount unmounts and waits for the serve loop to end. If a descriptor is
// still open on the mount, the unmount is busy: then, after a few retries,
// Unmount aborts the FUSE connection (umount2 with MNT_FORCE, which for
// FUSE fails every pending and later request with ENOTCONN:
// fuse_umount_begin in fs/fuse/inode.c) and detaches the mount
// (MNT_DETACH), and returns an error that wraps EBUSY. Either way nothing
// stays mounted, unless even the forced unmount fails, which the error then
// says. Later calls return the same result.
func (m *Mount) Unmount() error {
	m.once.Do(func() {
		err := m.server.Unmount() // retries EBUSY for about 0.3 s
		if err != nil {
			if ferr := unix.Unmount(m.dir, unix.MNT_FORCE|unix.MNT_DETACH); ferr != nil {
				m.err = fmt.Errorf("%s: unmount %s: %w; forced: %w", m.name, m.dir, err, ferr)
				return // still mounted: the serve loop runs on
			}
			m.err = fmt.Errorf("%s: unmount %s: %w: a descriptor was still open; connection aborted", m.name, m.dir, err)
		}
		<-m.served
	})
	return m.err
}

// Abs returns dir and backing as absolute paths, as a mount needs them.
func Abs(dir, backing string) (string, string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	backing, err = filepath.Abs(backing)
	return dir, backing, err
}

// MountT mounts a filesystem for a test: mount gets a new temporary mount
// point and a new temporary backing directory, and what it returns is
// unmounted when the test and its subtests complete, an error from that
// reported. MountT skips the test if /dev/fuse is missing or mounting is not
// permitted (mount(2) of FUSE needs root or CAP_SYS_ADMIN), and fails it on
// any other error. name prefixes the skip messages.
func MountT[F interface{ Unmount() error }](t testing.TB, name string, mount func(dir, backing string) (F, error)) F {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s: /dev/fuse is missing: this kernel or container has no FUSE", name)
	}
	backing, dir := t.TempDir(), t.TempDir()
	f, err := mount(dir, backing)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("%s: mounting FUSE needs root or CAP_SYS_ADMIN: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return f
}
