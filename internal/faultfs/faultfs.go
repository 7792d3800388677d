//go:build linux

package faultfs

import (
	"fmt"
	"sync"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/offmain/offmain/internal/fusemount"
)

// FS is a mounted fault-injecting loopback filesystem. Its methods are
// safe for concurrent use. It is made by [Mount] or [MountT].
type FS struct {
	dir, backing string
	mnt          *fusemount.Mount
	closing      chan struct{} // closed by Unmount: releases every hang
	release      func()        // closes closing, once

	mu    sync.Mutex // protects rules
	rules []*rule    // in the order set
}

// Mount mounts at mountpoint a loopback of the directory backing, with no
// faults set. Both directories must exist. The caller must call
// [FS.Unmount].
func Mount(mountpoint, backing string) (*FS, error) { return mount(mountpoint, backing, false) }

// mount mounts the loopback, with locks forwarded to the daemon if locks
// (see [MountLocks]).
func mount(mountpoint, backing string, locks bool) (*FS, error) {
	mountpoint, backing, err := fusemount.Abs(mountpoint, backing)
	if err != nil {
		return nil, err
	}
	lb, err := gofs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("faultfs: mount %s: %w", mountpoint, err)
	}
	f := &FS{dir: mountpoint, backing: backing, closing: make(chan struct{})}
	f.release = sync.OnceFunc(func() { close(f.closing) })
	root := &node{LoopbackNode: lb.(*gofs.LoopbackNode), fsys: f}
	root.RootData.RootNode = root
	// No caching (fusemount.Options): every lookup and stat reaches the
	// backing directory, so that a test may change it directly.
	opts := fusemount.Options("faultfs", backing)
	opts.EnableLocks = locks
	// Passthrough would let the kernel write the backing files itself,
	// behind the faults; file.PassthroughFd declines it too.
	opts.DisabledCapabilities = fuse.CAP_PASSTHROUGH
	if f.mnt, err = fusemount.Serve(mountpoint, root, opts); err != nil {
		return nil, err
	}
	return f, nil
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
	return fusemount.MountT(t, "faultfs", func(dir, backing string) (*FS, error) { return mount(dir, backing, locks) })
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
	f.release()
	return f.mnt.Unmount()
}
