//go:build linux

package powercut

import "fmt"

// Op is a counted operation: one that changes the disk's state or makes
// it durable. Reads, lookups, opens and closes are not counted: a cut just
// before or just after one leaves the same disk.
type Op uint8

// The counted operations, each named by the system call that sends it.
const (
	Create   Op = iota + 1 // open(2) with O_CREAT of a new file: FUSE_CREATE
	Mkdir                  // mkdir(2)
	Write                  // write(2), pwrite(2): one FUSE_WRITE (a large write may be several)
	Truncate               // ftruncate(2), truncate(2), open(2) with O_TRUNC
	Fsync                  // fsync(2), fdatasync(2) of a file
	FsyncDir               // fsync(2) of a directory
	Rename                 // rename(2), renameat2(2)
	Unlink                 // unlink(2)
	Rmdir                  // rmdir(2)
)

func (op Op) String() string {
	names := [...]string{"any", "create", "mkdir", "write", "truncate", "fsync", "fsyncdir", "rename", "unlink", "rmdir"}
	if int(op) < len(names) {
		return names[op]
	}
	return fmt.Sprintf("powercut.Op(%d)", uint8(op))
}

// Trigger says when an armed cut happens: at the N-th counted operation
// from now (of kind Op only, if Op is set), just after it or, with
// Before, just before it (it then fails with EIO and never happens). The
// zero Trigger cuts just after the next counted operation. A cut at a
// random point is a Trigger whose N the test draws.
type Trigger struct {
	N      int  // which operation: 1 (and 0) is the next one
	Op     Op   // the kind of operation counted; zero counts every kind
	Before bool // cut before that operation rather than after it
}

// Arm arms t, replacing a trigger armed before, and returns a channel
// closed when the cut it triggers has happened. A cut by [FS.Cut] also
// closes it, before Cut returns; a cut by an operation closes it soon
// after that operation returns (the helper tells this process then). If
// the helper exits, the channel is closed too: every operation fails
// then, and [FS.PowerOn] says why.
func (f *FS) Arm(t Trigger) <-chan struct{} {
	id, done := f.lastID.Add(1), make(chan struct{})
	f.mu.Lock()
	if f.gone {
		close(done)
	} else {
		f.armed[id] = done // before the helper can cut
	}
	f.mu.Unlock()
	var r armResult
	if f.call("arm", armArgs{ID: id, Trigger: t}, &r) == nil && r.Replaced != 0 {
		f.mu.Lock()
		delete(f.armed, r.Replaced) // it will never fire
		f.mu.Unlock()
	}
	return done
}

// Cut cuts the power now, between two operations: the backing directory
// becomes what the disk holds after power returns (see the package
// documentation), and every operation fails with EIO until
// [FS.PowerOn]. A second Cut before PowerOn does nothing.
func (f *FS) Cut() { f.call("cut", nil, nil) }

// PowerOn brings the filesystem back with what the backing directory
// holds, all of it durable, as after a reboot. Files and directories
// opened before the cut stay dead: every operation on them fails with
// EIO. PowerOn without a cut before it does nothing.
func (f *FS) PowerOn() error { return f.call("poweron", nil, nil) }

// Cuts returns how many cuts have happened: a cut is counted before
// [FS.Cut], or the operation that triggered it, returns.
func (f *FS) Cuts() int {
	f.ctrMu.RLock()
	defer f.ctrMu.RUnlock()
	if f.ctr == nil {
		return f.final.cuts
	}
	return int(f.ctr.cuts().Load())
}

// Ops returns how many counted operations have happened.
func (f *FS) Ops() uint64 {
	f.ctrMu.RLock()
	defer f.ctrMu.RUnlock()
	if f.ctr == nil {
		return f.final.ops
	}
	return f.ctr.ops().Load()
}
