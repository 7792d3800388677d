//go:build linux

package powercut

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
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
	server       *fuse.Server
	served       chan struct{} // closed when the serve loop has ended
	uid, gid     uint32        // the owner of every file: the mounting process's

	mu      sync.Mutex // protects the fields below, and every inode of m
	m       *model     // the live power cycle
	lastID  uint64     // the last inode number handed out, across cycles
	rng     *rand.Rand // the draws of each cut
	down    bool       // cut, not powered on yet: every operation fails with EIO
	ops     uint64     // counted operations so far (see Op)
	trigger *armed     // the pending trigger, or nil
	cuts    int

	unmountOnce sync.Once
	unmountErr  error
}

// Mount mounts at mountpoint a power-cut filesystem whose disk is the
// directory backing: it starts with what backing holds, all of it
// durable, and writes backing only at a cut. Both directories must exist;
// backing may hold only regular files and directories. The caller must
// call [FS.Unmount].
func Mount(mountpoint, backing string, opts Options) (*FS, error) {
	var err error
	if mountpoint, err = filepath.Abs(mountpoint); err != nil {
		return nil, err
	}
	if backing, err = filepath.Abs(backing); err != nil {
		return nil, err
	}
	f := &FS{dir: mountpoint, backing: backing, opts: opts, served: make(chan struct{}),
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	f.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	if f.m, err = load(backing, 1, &f.lastID); err != nil {
		return nil, err
	}
	root := &node{fsys: f}
	mopts := mountOptions(backing)
	server, err := fuse.NewServer(gofs.NewNodeFS(root, mopts), mountpoint, &mopts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("powercut: mount %s: %w", mountpoint, err)
	}
	f.server = server
	go func() {
		defer close(f.served)
		server.Serve()
	}()
	if err := server.WaitMount(); err != nil {
		return nil, errors.Join(fmt.Errorf("powercut: mount %s: %w", mountpoint, err), f.Unmount())
	}
	return f, nil
}

// mountOptions turns off the kernel's entry, attribute and negative-lookup
// caches: after a cut every name must be looked up again, in the tree
// that power-on brings back.
func mountOptions(backing string) *gofs.Options {
	var zero time.Duration
	return &gofs.Options{
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, // mount(2) itself: there is no fusermount to fall back on
			FsName:            backing,
			Name:              "powercut",
		},
	}
}

// MountT mounts a power-cut filesystem on a new temporary directory, its
// disk another new one, and unmounts it when the test and its subtests
// complete, reporting an error if that fails. It skips the test if
// /dev/fuse is missing or mounting is not permitted (it needs root or
// CAP_SYS_ADMIN).
func MountT(t testing.TB, opts Options) *FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); errors.Is(err, fs.ErrNotExist) {
		t.Skip("powercut: /dev/fuse is missing: this kernel or container has no FUSE")
	}
	backing, dir := t.TempDir(), t.TempDir()
	f, err := Mount(dir, backing, opts)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("powercut: mounting FUSE needs root or CAP_SYS_ADMIN: %v", err)
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

// Backing returns the directory that plays the disk. It holds what the
// mount held at the last cut (or at Mount), not the live files.
func (f *FS) Backing() string { return f.backing }

// Unmount unmounts and waits for the daemon's goroutines to end. If a
// descriptor is still open on the mount, it aborts the FUSE connection
// and detaches the mount, as faultfs does, and returns an error that
// wraps EBUSY. Later calls return the same result.
func (f *FS) Unmount() error {
	f.unmountOnce.Do(func() {
		err := f.server.Unmount() // retries EBUSY for about 0.3 s
		if err != nil {
			if ferr := unix.Unmount(f.dir, unix.MNT_FORCE|unix.MNT_DETACH); ferr != nil {
				f.unmountErr = fmt.Errorf("powercut: unmount %s: %w; forced: %w", f.dir, err, ferr)
				return
			}
			f.unmountErr = fmt.Errorf("powercut: unmount %s: %w: a descriptor was still open; connection aborted", f.dir, err)
		}
		<-f.served
	})
	return f.unmountErr
}
