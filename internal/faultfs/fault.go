//go:build linux

package faultfs

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Op is an operation a fault applies to.
type Op uint8

// The operations, each named by the system call whose result it changes.
const (
	Write  Op = iota + 1 // write(2), pwrite(2), writev(2): FUSE_WRITE
	Fsync                // fsync(2), fdatasync(2) of a file or directory: FUSE_FSYNC, FUSE_FSYNCDIR
	Rename               // rename(2), renameat2(2): FUSE_RENAME; matched on the old and the new path
	Close                // close(2): FUSE_FLUSH
)

func (op Op) String() string {
	switch op {
	case Write:
		return "write"
	case Fsync:
		return "fsync"
	case Rename:
		return "rename"
	case Close:
		return "close"
	}
	return fmt.Sprintf("faultfs.Op(%d)", uint8(op))
}

// Match selects the paths a fault applies to. It is given the path of the
// file or directory relative to the mount, slash-separated ("a.json",
// "sub/.a.json123"; "." for the mount's root). A nil Match selects every
// path. It is called from the daemon's goroutines, concurrently.
type Match func(path string) bool

// Base returns a [Match] for the files named name in any directory, and
// for the temporary files statefile writes on their way to name: names
// that start with "." + name (statefile creates ".<name><random digits>"
// beside the target, fsyncs it, renames it over the target, then fsyncs
// the directory). The directory itself is not selected.
func Base(name string) Match {
	return func(p string) bool {
		b := path.Base(p)
		return b == name || strings.HasPrefix(b, "."+name)
	}
}

// rule is one fault set by [FS.Fail] or [FS.Hang].
type rule struct {
	op    Op
	match Match
	errno syscall.Errno // the failure, or 0 for a hang
	hang  *Hang         // the hang, or nil for a failure
}

func (r *rule) matches(op Op, paths []string) bool {
	if r.op != op {
		return false
	}
	if r.match == nil {
		return true
	}
	return slices.ContainsFunc(paths, r.match)
}

// Fail makes op fail with errno on the paths m selects (all if m is nil),
// until clear is called; clear is idempotent. When several failures
// select the same operation, the one set last applies. Fail panics if
// errno is 0 or ENOSYS (see the package documentation).
func (f *FS) Fail(op Op, errno syscall.Errno, m Match) (clear func()) {
	if errno == 0 || errno == syscall.ENOSYS {
		panic(fmt.Sprintf("faultfs: Fail(%v, %d): errno must be neither 0 nor ENOSYS", op, errno))
	}
	r := f.add(&rule{op: op, match: m, errno: errno})
	return func() { f.remove(r) }
}

// Hang is a fault that blocks an operation until released. Its methods are
// safe for concurrent use.
type Hang struct {
	blocked     chan struct{} // closed when the first operation blocks
	blockedOnce sync.Once
	released    chan struct{} // closed by Release
	releaseOnce sync.Once
	remove      func()
}

// Hang makes op block on the paths m selects (all if m is nil) until
// [Hang.Release] or [FS.Unmount]; the released operation then proceeds,
// and fails if a [FS.Fail] selects it. Several hangs may select the same
// operation; it waits for all of them.
//
// A signal to the blocked thread makes the kernel send FUSE_INTERRUPT,
// and the operation then fails at once with EINTR. So a killed process
// dies without a release; a Go caller is unaffected by other signals, as
// package os retries fsync, write and rename on EINTR, and blocks again.
func (f *FS) Hang(op Op, m Match) *Hang {
	h := &Hang{blocked: make(chan struct{}), released: make(chan struct{})}
	r := f.add(&rule{op: op, match: m, hang: h})
	h.remove = func() { f.remove(r) }
	return h
}

// Blocked returns a channel that is closed once an operation is blocked
// by h: from then on the caller of that operation is inside its system
// call, waiting for [Hang.Release].
func (h *Hang) Blocked() <-chan struct{} { return h.blocked }

// Release removes the hang and lets the operations it blocks proceed.
// Release is idempotent.
func (h *Hang) Release() {
	h.releaseOnce.Do(func() {
		h.remove()
		close(h.released)
	})
}

// wait blocks until h is released, the mount is closing or ctx (the FUSE
// request, cancelled by the kernel's FUSE_INTERRUPT) is done.
func (h *Hang) wait(ctx context.Context, closing <-chan struct{}) syscall.Errno {
	h.blockedOnce.Do(func() { close(h.blocked) })
	select {
	case <-h.released:
		return 0
	case <-closing:
		return 0
	case <-ctx.Done():
		return syscall.EINTR
	}
}

func (f *FS) add(r *rule) *rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, r)
	return r
}

func (f *FS) remove(r *rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = slices.DeleteFunc(f.rules, func(x *rule) bool { return x == r })
}

// inject applies the faults for op on paths: it waits out every hang that
// selects them, then returns the errno of the last failure that selects
// them, or 0 to let the operation through.
func (f *FS) inject(ctx context.Context, op Op, paths ...string) syscall.Errno {
	for _, r := range f.selecting(op, paths) {
		if r.hang == nil {
			continue
		}
		if errno := r.hang.wait(ctx, f.closing); errno != 0 {
			return errno
		}
	}
	var errno syscall.Errno
	for _, r := range f.selecting(op, paths) { // anew: a hang may have outlasted a failure
		if r.hang == nil {
			errno = r.errno
		}
	}
	return errno
}

// selecting returns the rules for op that select one of paths, oldest
// first. It calls the Match functions without holding mu, so that one may
// call back into f.
func (f *FS) selecting(op Op, paths []string) []*rule {
	f.mu.Lock()
	rules := slices.Clone(f.rules)
	f.mu.Unlock()
	return slices.DeleteFunc(rules, func(r *rule) bool { return !r.matches(op, paths) })
}
