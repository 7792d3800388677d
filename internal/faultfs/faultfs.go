//go:build linux

package faultfs

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
)

// FS is a mounted fault-injecting loopback filesystem. Its methods are
// safe for concurrent use. It is made by [Mount] or [MountT].
type FS struct {
	dir, backing string
	server       *fuse.Server
	served       chan struct{} // closed when the serve loop has ended
	closing      chan struct{} // closed by Unmount: releases every hang

	mu    sync.Mutex // protects rules
	rules []*rule    // in the order set

	unmountOnce sync.Once
	unmountErr  error
}

// Mount mounts at mountpoint a loopback of the directory backing, with no
// faults set. Both directories must exist. The caller must call
// [FS.Unmount].
func Mount(mountpoint, backing string) (*FS, error) { return mount(mountpoint, backing, false) }

// mount mounts the loopback, with locks forwarded to the daemon if locks
// (see [MountLocks]).
func mount(mountpoint, backing string, locks bool) (*FS, error) {
	var err error
	if mountpoint, err = filepath.Abs(mountpoint); err != nil {
		return nil, err
	}
	if backing, err = filepath.Abs(backing); err != nil {
		return nil, err
	}
	lb, err := gofs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("faultfs: mount %s: %w", mountpoint, err)
	}
	f := &FS{dir: mountpoint, backing: backing, served: make(chan struct{}), closing: make(chan struct{})}
	root := &node{LoopbackNode: lb.(*gofs.LoopbackNode), fsys: f}
	root.RootData.RootNode = root
	opts := options(backing)
	opts.EnableLocks = locks
	server, err := fuse.NewServer(gofs.NewNodeFS(root, opts), mountpoint, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("faultfs: mount %s: %w", mountpoint, err)
	}
	f.server = server
	go func() {
		defer close(f.served)
		server.Serve()
	}()
	if err := server.WaitMount(); err != nil {
		return nil, errors.Join(fmt.Errorf("faultfs: mount %s: %w", mountpoint, err), f.Unmount())
	}
	return f, nil
}

// options are the mount's options.
func options(backing string) *gofs.Options {
	// No caching: every lookup and stat reaches the backing directory, so
	// that a test may change it directly.
	var zero time.Duration
	return &gofs.Options{
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, // mount(2) itself: there is no fusermount to fall back on
			FsName:            backing,
			Name:              "faultfs",
			// Passthrough would let the kernel write the backing files
			// itself, behind the faults; file.PassthroughFd declines it too.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
		},
	}
}

// MountT mounts a loopback of a new temporary directory on another one,
// and unmounts it when the test and its subtests complete, reporting an
// error if that fails (see [FS.Unmount]). It skips the test if /dev/fuse
// is missing or mounting is not permitted.
func MountT(t testing.TB) *FS {
	t.Helper()
	return mountT(t, false)
}

// mountT is [MountT], with locks forwarded if locks.
func mountT(t testing.TB, locks bool) *FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); errors.Is(err, fs.ErrNotExist) {
		t.Skip("faultfs: /dev/fuse is missing: this kernel or container has no FUSE")
	}
	backing, dir := t.TempDir(), t.TempDir()
	f, err := mount(dir, backing, locks)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("faultfs: mounting FUSE needs root or CAP_SYS_ADMIN: %v", err)
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

// Dir returns the mount point: the files to test live under it.
func (f *FS) Dir() string { return f.dir }

// Backing returns the backing directory, which holds what the mount
// shows. Changing it directly bypasses every fault.
func (f *FS) Backing() string { return f.backing }

// Unmount releases every [Hang], unmounts and waits for the daemon's
// goroutines to end. If a descriptor is still open on the mount, the
// unmount is busy: then, after a few retries, Unmount aborts the FUSE
// connection (umount2 with MNT_FORCE, which for FUSE fails every pending
// and later request with ENOTCONN: fuse_umount_begin in fs/fuse/inode.c)
// and detaches the mount (MNT_DETACH), and returns an error that wraps
// EBUSY. Either way nothing stays mounted, unless even the forced
// unmount fails, which the error then says. Later calls return the same
// result.
func (f *FS) Unmount() error {
	f.unmountOnce.Do(func() {
		close(f.closing)
		err := f.server.Unmount() // retries EBUSY for about 0.3 s
		if err != nil {
			if ferr := unix.Unmount(f.dir, unix.MNT_FORCE|unix.MNT_DETACH); ferr != nil {
				f.unmountErr = fmt.Errorf("faultfs: unmount %s: %w; forced: %w", f.dir, err, ferr)
				return // still mounted: the serve loop runs on
			}
			f.unmountErr = fmt.Errorf("faultfs: unmount %s: %w: a descriptor was still open; connection aborted", f.dir, err)
		}
		<-f.served
	})
	return f.unmountErr
}
