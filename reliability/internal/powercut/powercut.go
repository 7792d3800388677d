//go:build linux

package powercut

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/offmain/offmain/internal/oneline"
	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/reliability/internal/fusemount"
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

// FS is a mounted power-cut filesystem, served by a helper process. Its
// methods are safe for concurrent use. It is made by [Mount] or [MountT].
type FS struct {
	proc   *fusemount.Process
	lastID atomic.Uint64 // the last trigger's ID

	mu    sync.Mutex               // protects armed and gone
	armed map[uint64]chan struct{} // the triggers not fired yet, by ID
	gone  bool                     // the helper has exited

	ctrMu sync.RWMutex // protects ctr and final
	ctr   *counters    // the helper's counts, until Unmount
	final struct {     // the counts at Unmount
		cuts int
		ops  uint64
	}
}

func init() { fusemount.Helper("powercut", serve) }

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
	f := &FS{armed: map[uint64]chan struct{}{}}
	ctr, path, done, err := newCounters()
	if err != nil {
		return nil, err
	}
	defer done()
	f.proc, err = fusemount.Start("powercut", mountpoint, backing, config{Options: opts, Counters: path}, f.event)
	if err != nil {
		return nil, oneline.Join(err, ctr.unmap())
	}
	f.ctr = ctr
	return f, nil
}

// MountT mounts a power-cut filesystem on a new temporary directory, its
// disk a new tmpfs, and unmounts both when the test and its subtests
// complete, reporting an error if that fails. It skips the test if
// /dev/fuse is missing or mounting is not permitted (it needs root or
// CAP_SYS_ADMIN). The disk is in memory so that a cut, which rewrites it,
// never waits for a real disk: on an ext4 mounted with discard, one
// unlink(2) of that rewrite waited over a minute in blkdev_issue_discard
// on this project's shared test machine, and the torture counted a hang.
func MountT(t testing.TB, opts Options) *FS {
	t.Helper()
	return fusemount.MountT(t, "powercut", func(dir, _ string) (*FS, error) {
		return Mount(dir, tmpmount.Tmpfs(t, "256m"), opts)
	})
}

// Dir returns the mount point: the files to test live under it.
func (f *FS) Dir() string { return f.proc.Dir() }

// Backing returns the directory that plays the disk. It holds what the
// mount held at the last cut (or at Mount), not the live files.
func (f *FS) Backing() string { return f.proc.Backing() }

// Unmount unmounts and waits for the helper to exit. If a descriptor is
// still open on the mount, the helper aborts the FUSE connection and
// detaches the mount, as faultfs does, and Unmount returns an error that
// wraps EBUSY; if the helper died, Unmount detaches the mount and its
// error matches fusemount.ErrHelperExited. Later calls return the same
// result.
func (f *FS) Unmount() error {
	err := f.proc.Unmount()
	f.ctrMu.Lock()
	defer f.ctrMu.Unlock()
	if f.ctr != nil {
		f.final.cuts, f.final.ops = int(f.ctr.cuts().Load()), f.ctr.ops().Load()
		err = oneline.Join(err, f.ctr.unmap())
		f.ctr = nil
	}
	return err
}

// call calls the helper. Only PowerOn can fail; another call fails only
// when the helper has exited, which every later operation and PowerOn
// report: any other error is a bug of this package.
func (f *FS) call(method string, args, result any) error {
	err := f.proc.Call(method, args, result)
	if err != nil && method != "poweron" && !errors.Is(err, fusemount.ErrHelperExited) {
		panic(fmt.Sprintf("powercut: %s: %v", method, err))
	}
	return err
}

// event closes the channel of a trigger that fired, or of every trigger
// once the helper has exited ("").
func (f *FS) event(name string, arg json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch name {
	case "cut":
		var ev cutEvent
		if json.Unmarshal(arg, &ev) == nil && f.armed[ev.ID] != nil {
			close(f.armed[ev.ID])
			delete(f.armed, ev.ID)
		}
	case "":
		f.gone = true
		for id, done := range f.armed {
			close(done)
			delete(f.armed, id)
		}
	}
}
