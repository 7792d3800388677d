//go:build linux

package faultfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Lock is flock(2) and fcntl(2) record locks: FUSE_SETLK, FUSE_SETLKW and
// FUSE_GETLK. A fault on it applies only on a mount made by [MountLocks]
// or [MountLocksT], which asks the kernel to forward locks to the daemon
// (FUSE_FLOCK_LOCKS and FUSE_POSIX_LOCKS). On a [Mount] the kernel keeps
// the locks itself (fuse_file_flock in fs/fuse/file.c handles flock
// locally when the daemon did not ask for them) and the daemon never sees
// one. Fail(Lock, ENOLCK) or Fail(Lock, EOPNOTSUPP) makes the mount answer
// like an SMB, NFS or 9p mount without lock support: flock(2) returns that
// errno. Its String is "faultfs.Op(5)".
const Lock Op = Close + 1

var (
	_ gofs.FileSetlker  = (*file)(nil)
	_ gofs.FileSetlkwer = (*file)(nil)
	_ gofs.FileGetlker  = (*file)(nil)
)

func (f *file) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	if errno := f.n.inject(ctx, Lock); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Setlk(ctx, owner, lk, flags)
}

func (f *file) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	if errno := f.n.inject(ctx, Lock); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Setlkw(ctx, owner, lk, flags)
}

func (f *file) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	if errno := f.n.inject(ctx, Lock); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Getlk(ctx, owner, lk, flags, out)
}

// MountLocks is [Mount] with locks forwarded to the daemon, so that faults
// on [Lock] apply. Without a fault, locks behave as on the backing
// filesystem (the loopback takes them on its own descriptors).
func MountLocks(mountpoint, backing string) (*FS, error) {
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
	opts.EnableLocks = true
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

// MountLocksT is [MountT] with locks forwarded to the daemon: see
// [MountLocks]. It skips the test where [MountT] does.
func MountLocksT(t testing.TB) *FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); errors.Is(err, fs.ErrNotExist) {
		t.Skip("faultfs: /dev/fuse is missing: this kernel or container has no FUSE")
	}
	backing, dir := t.TempDir(), t.TempDir()
	f, err := MountLocks(dir, backing)
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
