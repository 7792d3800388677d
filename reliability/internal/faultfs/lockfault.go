//go:build linux

package faultfs

import (
	"context"
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
// errno.
const Lock Op = Read + 1

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
func MountLocks(mountpoint, backing string) (*FS, error) { return mount(mountpoint, backing, true) }

// MountLocksT is [MountT] with locks forwarded to the daemon: see
// [MountLocks]. It skips the test where [MountT] does.
func MountLocksT(t testing.TB) *FS {
	t.Helper()
	return mountT(t, true)
}
