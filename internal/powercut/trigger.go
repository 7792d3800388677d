//go:build linux

package powercut

import (
	"fmt"
	"syscall"
)

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

// armed is a trigger counting down.
type armed struct {
	t    Trigger
	left int
	done chan struct{} // closed by the cut
}

// Arm arms t, replacing a trigger armed before, and returns a channel
// closed when the cut it triggers has happened. A cut by [FS.Cut] also
// closes it.
func (f *FS) Arm(t Trigger) <-chan struct{} {
	a := &armed{t: t, left: max(t.N, 1), done: make(chan struct{})}
	f.mu.Lock()
	f.trigger = a
	f.mu.Unlock()
	return a.done
}

// Cut cuts the power now, between two operations: the backing directory
// becomes what the disk holds after power returns (see the package
// documentation), and every operation fails with EIO until
// [FS.PowerOn]. A second Cut before PowerOn does nothing.
func (f *FS) Cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutLocked()
}

// PowerOn brings the filesystem back with what the backing directory
// holds, all of it durable, as after a reboot. Files and directories
// opened before the cut stay dead: every operation on them fails with
// EIO. PowerOn without a cut before it does nothing.
func (f *FS) PowerOn() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down {
		return nil
	}
	m, err := load(f.backing, f.m.epoch+1, &f.lastID)
	if err != nil {
		return err
	}
	f.m, f.down = m, false
	return nil
}

// Cuts returns how many cuts have happened.
func (f *FS) Cuts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cuts
}

// Ops returns how many counted operations have happened.
func (f *FS) Ops() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops
}

// cutLocked is Cut with f.mu held. The backing directory is rewritten
// under the lock, so no operation runs between the cut and the disk.
func (f *FS) cutLocked() {
	if f.down {
		return
	}
	img := f.m.cut(f.rng, f.opts.Forget)
	if err := img.write(f.backing); err != nil {
		panic(fmt.Sprintf("powercut: writing the disk %s after a cut: %v", f.backing, err))
	}
	f.down = true
	f.cuts++
	if f.trigger != nil {
		close(f.trigger.done)
		f.trigger = nil
	}
}

// before runs before a counted operation, with f.mu held. It returns EIO
// when the power is off, or when a Before trigger cuts it now.
func (f *FS) before(op Op) syscall.Errno {
	if f.down {
		return syscall.EIO
	}
	if a := f.trigger; a != nil && a.t.Before && a.counts(op) && a.left == 1 {
		f.cutLocked()
		return syscall.EIO
	}
	return 0
}

// after runs after a counted operation succeeded, with f.mu held: it
// counts it and cuts if an after trigger says so. The operation still
// returns its result: it happened before the power went.
func (f *FS) after(op Op) {
	f.ops++
	if a := f.trigger; a != nil && a.counts(op) {
		if a.left--; a.left == 0 {
			f.cutLocked()
		}
	}
}

func (a *armed) counts(op Op) bool { return a.t.Op == 0 || a.t.Op == op }
