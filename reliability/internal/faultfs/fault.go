//go:build linux

package faultfs

import (
	"fmt"
	"path"
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
	Read                 // read(2), pread(2), readv(2) that miss the page cache: FUSE_READ
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
	case Read:
		return "read"
	case Lock:
		return "lock"
	}
	return fmt.Sprintf("faultfs.Op(%d)", uint8(op))
}

// Match selects the paths a fault applies to, by the path of the file or
// directory relative to the mount, slash-separated ("a.json",
// "sub/.a.json123"; "." for the mount's root). A nil Match selects every
// path. [Base], [Path] and [Glob] make them: a Match is a description the
// helper process that serves the mount evaluates, not code.
type Match interface {
	// Matches reports whether the fault applies to path.
	Matches(path string) bool
	spec() *matchSpec
}

// matchSpec is a Match as the helper gets it: one of its fields is set.
type matchSpec struct {
	Base string `json:"base,omitempty"`
	Path string `json:"path,omitempty"`
	Glob string `json:"glob,omitempty"`
}

func (m *matchSpec) spec() *matchSpec { return m }

func (m *matchSpec) Matches(p string) bool {
	switch {
	case m.Base != "":
		b := path.Base(p)
		return b == m.Base || strings.HasPrefix(b, "."+m.Base)
	case m.Glob != "":
		ok, _ := path.Match(m.Glob, p) // checked by Glob
		return ok
	}
	return p == m.Path
}

// specOf returns m's description, nil for every path.
func specOf(m Match) *matchSpec {
	if m == nil {
		return nil
	}
	return m.spec()
}

// Base returns a [Match] for the files named name in any directory, and
// for the temporary files statefile writes on their way to name: names
// that start with "." + name (statefile creates ".<name><random digits>"
// beside the target, fsyncs it, renames it over the target, then fsyncs
// the directory). The directory itself is not selected.
func Base(name string) Match {
	if name == "" {
		panic("faultfs: Base of an empty name")
	}
	return &matchSpec{Base: name}
}

// Path returns a [Match] for the one path p, relative to the mount: "."
// selects the mount's root directory (its fsync, say), "sub/a.json" that
// file only.
func Path(p string) Match { return &matchSpec{Path: path.Clean(p)} }

// Glob returns a [Match] for the paths that match pattern as path.Match
// matches them: "*.json" selects the JSON files in the mount's root,
// "sub/.*" the dot files of sub. It panics if the pattern is malformed.
func Glob(pattern string) Match {
	if _, err := path.Match(pattern, ""); err != nil {
		panic(fmt.Sprintf("faultfs: Glob(%q): %v", pattern, err))
	}
	return &matchSpec{Glob: pattern}
}

// ruleArgs set a fault in the helper: a failure with Errno, or a hang.
// The IDs are this process's, so that a hang's event can find it even
// before the call that set it returns.
type ruleArgs struct {
	ID    uint64        `json:"id"`
	Op    Op            `json:"op"`
	Match *matchSpec    `json:"match,omitempty"`
	Errno syscall.Errno `json:"errno,omitempty"`
	Hang  bool          `json:"hang,omitempty"`
}

// idArgs name a fault set before, by the ID the helper gave it.
type idArgs struct {
	ID uint64 `json:"id"`
}

// Fail makes op fail with errno on the paths m selects (all if m is nil),
// until clear is called; clear is idempotent. When several failures
// select the same operation, the one set last applies. Fail returns once
// the fault applies to every later system call. It panics if errno is 0
// or ENOSYS (see the package documentation).
func (f *FS) Fail(op Op, errno syscall.Errno, m Match) (clear func()) {
	if errno == 0 || errno == syscall.ENOSYS {
		panic(fmt.Sprintf("faultfs: Fail(%v, %d): errno must be neither 0 nor ENOSYS", op, errno))
	}
	id := f.newID()
	f.call("fail", ruleArgs{ID: id, Op: op, Match: specOf(m), Errno: errno})
	return sync.OnceFunc(func() { f.call("clear", idArgs{ID: id}) })
}

// Hang is a fault that blocks an operation until released. Its methods are
// safe for concurrent use.
type Hang struct {
	id          uint64
	blocked     chan struct{} // closed when the first operation blocks
	blockedOnce sync.Once
	release     func() // releases, once
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
	h := &Hang{id: f.newID(), blocked: make(chan struct{})}
	h.release = sync.OnceFunc(func() { f.call("release", idArgs{ID: h.id}) })
	f.mu.Lock()
	if f.gone {
		h.unblock()
	} else {
		f.hangs[h.id] = h // before the helper can block an operation
	}
	f.mu.Unlock()
	f.call("hang", ruleArgs{ID: h.id, Op: op, Match: specOf(m), Hang: true})
	return h
}

// Blocked returns a channel that is closed once an operation is blocked
// by h: from then on the caller of that operation is inside its system
// call, waiting for [Hang.Release]. It is also closed if the helper
// process serving the mount exits: the mount is dead then, the operations
// waiting fail with ECONNABORTED and later ones with ENOTCONN.
func (h *Hang) Blocked() <-chan struct{} { return h.blocked }

func (h *Hang) unblock() { h.blockedOnce.Do(func() { close(h.blocked) }) }

// Release removes the hang and lets the operations it blocks proceed; it
// returns once they may. Release is idempotent, and does nothing after
// [FS.Unmount].
func (h *Hang) Release() { h.release() }
