//go:build linux

package faultfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/offmain/offmain/reliability/internal/fusemount"
)

func init() { fusemount.Helper("faultfs", serve) }

// FS is a mounted fault-injecting loopback filesystem, served by a helper
// process. Its methods are safe for concurrent use. It is made by [Mount]
// or [MountT].
type FS struct {
	proc   *fusemount.Process
	lastID atomic.Uint64 // the last fault's ID

	mu    sync.Mutex       // protects the fields below
	hangs map[uint64]*Hang // the hangs that have blocked no operation yet
	gone  bool             // the helper has exited
}

// config is a mount's configuration, as the helper gets it.
type config struct {
	Locks bool `json:"locks"` // forward locks to the daemon (MountLocks)
}

// Mount mounts at mountpoint a loopback of the directory backing, with no
// faults set. Both directories must exist. The caller must call
// [FS.Unmount].
func Mount(mountpoint, backing string) (*FS, error) { return mount(mountpoint, backing, false) }

// mount starts the helper that serves the loopback, with locks forwarded
// to it if locks (see [MountLocks]).
func mount(mountpoint, backing string, locks bool) (*FS, error) {
	mountpoint, backing, err := fusemount.Abs(mountpoint, backing)
	if err != nil {
		return nil, err
	}
	f := &FS{hangs: map[uint64]*Hang{}}
	if f.proc, err = fusemount.Start("faultfs", mountpoint, backing, config{Locks: locks}, f.event); err != nil {
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
func (f *FS) Dir() string { return f.proc.Dir() }

// Backing returns the backing directory, which holds what the mount
// shows. Changing it directly bypasses every fault.
func (f *FS) Backing() string { return f.proc.Backing() }

// Unmount releases every [Hang], unmounts and waits for the helper to
// exit. If a descriptor is still open on the mount, the unmount is busy:
// then, after a few retries, the helper aborts the FUSE connection
// (umount2 with MNT_FORCE, which for FUSE fails every pending and later
// request with ENOTCONN: fuse_umount_begin in fs/fuse/inode.c) and
// detaches the mount (MNT_DETACH), and Unmount returns an error that
// wraps EBUSY. If the helper died, Unmount detaches the mount and its
// error matches fusemount.ErrHelperExited. Either way nothing stays
// mounted, unless even the forced unmount fails, which the error then
// says. Later calls return the same result.
func (f *FS) Unmount() error { return f.proc.Unmount() }

func (f *FS) newID() uint64 { return f.lastID.Add(1) }

// call calls the helper. Once it has exited, the call does nothing: the
// mount is dead then (every operation fails with ENOTCONN) and
// [FS.Unmount] reports why. Any other error is a bug of this package.
func (f *FS) call(method string, args any) {
	err := f.proc.Call(method, args, nil)
	if err != nil && !errors.Is(err, fusemount.ErrHelperExited) {
		panic(fmt.Sprintf("faultfs: %s: %v", method, err))
	}
}

// event handles the helper's events: a hang's first blocked operation,
// and the helper's exit ("").
func (f *FS) event(name string, arg json.RawMessage) {
	f.mu.Lock()
	var unblock []*Hang
	switch name {
	case "blocked":
		var a idArgs
		if err := json.Unmarshal(arg, &a); err == nil && f.hangs[a.ID] != nil {
			unblock = append(unblock, f.hangs[a.ID])
			delete(f.hangs, a.ID)
		}
	case "":
		f.gone = true
		for _, h := range f.hangs {
			unblock = append(unblock, h)
		}
		clear(f.hangs)
	}
	f.mu.Unlock()
	for _, h := range unblock {
		h.unblock()
	}
}
