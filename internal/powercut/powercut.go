//go:build linux

package powercut

import (
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/offmain/offmain/internal/fusemount"
)

// Options configures an [FS]. The zero value is the default for every
// field.
type Options struct {
	// Seed seeds the draws of every cut: which pending directory
	// operations survive and how unsynced files are torn. The same seed
	// and the same operations give the same disk. Zero is a seed too.
	Seed uint64

	// Forget makes every cut lose all that is not durable, with no draw:
	// every unsynced write and every directory operation not made durable
	// by an fsync of its directory (LazyFS's "clear" fault). False (the
	// zero value) draws, per cut, which of them survive and where files
	// tear.
	Forget bool

	// IgnoreFsync makes fsync(2) and fdatasync(2) of a file succeed
	// without making anything durable, like a disk that drops cache
	// flushes; a writer run on it behaves as if it never fsynced its
	// files. False (the zero value) means fsync works.
	IgnoreFsync bool

	// IgnoreDirFsync does the same for fsync(2) of a directory: a writer
	// run on it behaves as if it never fsynced its directories. False
	// (the zero value) means fsync of a directory works.
	IgnoreDirFsync bool
}

// FS is a mounted power-cut filesystem. Its methods are safe for
// concurrent use. It is made by [Mount] or [MountT].
type FS struct {
	dir, backing string
	opts         Options
	mnt          *fusemount.Mount
	uid, gid     uint32 // the owner of every file: the mounting process's

	mu      sync.Mutex // protects the fields below, and every inode of m
	m       *model     // the live power cycle
	lastID  uint64     // the last inode number handed out, across cycles
	rng     *rand.Rand // the draws of each cut
	down    bool       // cut, not powered on yet: every operation fails with EIO
	ops     uint64     // counted operations so far (see Op)
	trigger *armed     // the pending trigger, or nil
	cuts    int
}

// Mount mounts at mountpoint a power-cut filesystem whose disk is the
// directory backing: it starts with what backing holds, all of it
// durable, and writes backing only at a cut. Both directories must exist;
// backing may hold only regular files and directories. The caller must
// call [FS.Unmount].
func Mount(mountpoint, backing string, opts Options) (*FS, error) {
	mountpoint, backing, err := fusemount.Abs(mountpoint, backing)
	if err != nil {
		return nil, err
	}
	f := &FS{dir: mountpoint, backing: backing, opts: opts,
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	f.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	if f.m, err = load(backing, 1, &f.lastID); err != nil {
		return nil, err
	}
	// The kernel's caches are off (fusemount.Options): after a cut every
	// name must be looked up again, in the tree that power-on brings back.
	if f.mnt, err = fusemount.Serve(mountpoint, &node{fsys: f}, fusemount.Options("powercut", backing)); err != nil {
		return nil, err
	}
	return f, nil
}

// MountT mounts a power-cut filesystem on a new temporary directory, its
// disk another new one, and unmounts it when the test and its subtests
// complete, reporting an error if that fails. It skips the test if
// /dev/fuse is missing or mounting is not permitted (it needs root or
// CAP_SYS_ADMIN).
func MountT(t testing.TB, opts Options) *FS {
	t.Helper()
	return fusemount.MountT(t, "powercut", func(dir, backing string) (*FS, error) { return Mount(dir, backing, opts) })
}

// Dir returns the mount point: the files to test live under it.
func (f *FS) Dir() string { return f.dir }

// Backing returns the directory that plays the disk. It holds what the
// mount held at the last cut (or at Mount), not the live files.
func (f *FS) Backing() string { return f.backing }

// Unmount unmounts and waits for the daemon's goroutines to end. If a
// descriptor is still open on the mount, it aborts the FUSE connection
// and detaches the mount, as faultfs does, and returns an error that
// wraps EBUSY. Later calls return the same result.
func (f *FS) Unmount() error { return f.mnt.Unmount() }
