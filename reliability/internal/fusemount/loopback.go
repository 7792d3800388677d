//go:build linux

package fusemount

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

func init() { Helper("loopback", serveLoopback) }

// LoopbackOptions configures a [Loopback]. The zero value is go-fuse's
// default (fs.NewNodeFS with nil options): entries and attributes cached
// by the kernel for 1 s, failed lookups not cached, as a FUSE home or
// cloud drive built on go-fuse would run.
type LoopbackOptions struct {
	// EntryTimeout is how long the kernel may keep resolving a name to
	// the inode a lookup found, without asking the daemon again. Zero
	// means 1 s; a negative value means no caching.
	EntryTimeout time.Duration
	// AttrTimeout is how long the kernel may answer stat(2) and lstat(2)
	// from the attributes it last got. Zero means 1 s; a negative value
	// means no caching.
	AttrTimeout time.Duration
	// NegativeTimeout is how long the kernel may remember that a name
	// does not exist. Zero means not at all.
	NegativeTimeout time.Duration
}

// timeout turns an option into go-fuse's: zero is def, negative is zero.
func timeout(d, def time.Duration) *time.Duration {
	switch {
	case d == 0:
		d = def
	case d < 0:
		d = 0
	}
	return &d
}

// Loopback mounts at mountpoint a loopback of the directory backing
// (go-fuse's fs.NewLoopbackRoot), served by a helper process. What a
// test writes through the mount lands in backing; what it changes in
// backing directly, as another client of a network filesystem would,
// shows through the mount once the kernel's caches (opts) let it. Both
// directories must exist. The caller must call [Process.Unmount].
func Loopback(mountpoint, backing string, opts LoopbackOptions) (*Process, error) {
	mountpoint, backing, err := Abs(mountpoint, backing)
	if err != nil {
		return nil, err
	}
	return Start("loopback", mountpoint, backing, loopbackConfig{
		Entry:    *timeout(opts.EntryTimeout, time.Second),
		Attr:     *timeout(opts.AttrTimeout, time.Second),
		Negative: *timeout(opts.NegativeTimeout, 0),
	}, nil)
}

// LoopbackT mounts a [Loopback] of a new temporary directory on another
// one, and unmounts it when the test and its subtests complete, reporting
// an error if that fails. It skips the test where [MountT] does.
func LoopbackT(t testing.TB, opts LoopbackOptions) *Process {
	t.Helper()
	return MountT(t, "loopback", func(dir, backing string) (*Process, error) { return Loopback(dir, backing, opts) })
}

// loopbackConfig is a Loopback's configuration, as its helper gets it.
type loopbackConfig struct {
	Entry, Attr, Negative time.Duration
}

// loopback is the helper side of a Loopback.
type loopback struct{ m *Mount }

func serveLoopback(dir, backing string, config json.RawMessage, _ func(string, any)) (Server, error) {
	var c loopbackConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, err
	}
	root, err := gofs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("loopback: mount %s: %w", dir, err)
	}
	// No passthrough, which go-fuse enables as root on kernels that have
	// it (6.9 and later): with it the kernel reads and writes the backing
	// file itself, as no network filesystem's client does.
	m, err := Serve(dir, root, &gofs.Options{
		EntryTimeout:    &c.Entry,
		AttrTimeout:     &c.Attr,
		NegativeTimeout: &c.Negative,
		MountOptions: fuse.MountOptions{
			DirectMountStrict:    true, // mount(2) itself: there may be no fusermount
			FsName:               backing,
			Name:                 "loopback",
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
		},
	})
	if err != nil {
		return nil, err
	}
	return loopback{m}, nil
}

func (l loopback) Call(method string, _ json.RawMessage) (any, error) {
	return nil, fmt.Errorf("loopback: no method %q", method)
}

func (l loopback) Unmount() error { return l.m.Unmount() }
