//go:build linux

package powercut

import (
	"context"
	"maps"
	"slices"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is the kernel's handle on an inode of the model. Every method takes
// the FS's lock, so each operation is atomic with respect to a cut: a cut
// falls between two operations.
type node struct {
	gofs.Inode
	fsys *server
	m    *inode // nil for the root, which is the live cycle's root
}

var (
	_ gofs.NodeLookuper  = (*node)(nil)
	_ gofs.NodeGetattrer = (*node)(nil)
	_ gofs.NodeSetattrer = (*node)(nil)
	_ gofs.NodeCreater   = (*node)(nil)
	_ gofs.NodeMkdirer   = (*node)(nil)
	_ gofs.NodeUnlinker  = (*node)(nil)
	_ gofs.NodeRmdirer   = (*node)(nil)
	_ gofs.NodeRenamer   = (*node)(nil)
	_ gofs.NodeOpener    = (*node)(nil)
	_ gofs.NodeReader    = (*node)(nil)
	_ gofs.NodeWriter    = (*node)(nil)
	_ gofs.NodeFsyncer   = (*node)(nil)
	_ gofs.NodeReaddirer = (*node)(nil)
	_ gofs.NodeOpendirer = (*node)(nil)
)

// live returns n's inode, or EIO when the power is off or n belongs to a
// cycle before the last cut. f.mu is held.
func (n *node) live() (*inode, syscall.Errno) {
	f := n.fsys
	switch {
	case f.down:
		return nil, syscall.EIO
	case n.m == nil:
		return f.m.root, 0
	case n.m.epoch != f.m.epoch:
		return nil, syscall.EIO
	}
	return n.m, 0
}

// lock takes the FS's lock and returns n's inode; unlock is to be
// deferred even on error.
func (n *node) lock() (*inode, syscall.Errno) {
	n.fsys.mu.Lock()
	return n.live()
}

func (n *node) unlock() { n.fsys.mu.Unlock() }

// child returns the kernel's handle on c, a child of n.
func (n *node) child(ctx context.Context, c *inode, out *fuse.EntryOut) *gofs.Inode {
	n.fsys.fill(c, &out.Attr)
	mode := uint32(syscall.S_IFREG)
	if c.dir {
		mode = syscall.S_IFDIR
	}
	return n.NewInode(ctx, &node{fsys: n.fsys, m: c}, gofs.StableAttr{Mode: mode, Ino: c.id})
}

// fill fills a's fields from c.
func (f *server) fill(c *inode, a *fuse.Attr) {
	a.Ino = c.id
	a.Mode = c.mode | syscall.S_IFREG
	a.Nlink = 1
	if c.dir {
		a.Mode = c.mode | syscall.S_IFDIR
		a.Nlink = 2
	}
	a.Size = uint64(len(c.data))
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	a.SetTimes(&c.mtime, &c.mtime, &c.mtime)
	a.Owner = fuse.Owner{Uid: f.uid, Gid: f.gid}
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return nil, errno
	}
	c, errno := lookup(d, name)
	if errno != 0 {
		return nil, errno
	}
	return n.child(ctx, c, out), 0
}

func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	c, errno := n.lock()
	defer n.unlock()
	if errno == 0 {
		n.fsys.fill(c, &out.Attr)
	}
	return errno
}

func (n *node) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	c, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return errno
	}
	if size, ok := in.GetSize(); ok {
		if c.dir {
			return syscall.EISDIR
		}
		if errno := n.fsys.before(Truncate); errno != 0 {
			return errno
		}
		c.truncate(int(size))
		n.fsys.after(Truncate)
	}
	if mode, ok := in.GetMode(); ok {
		c.mode = mode & 0o7777
	}
	if mtime, ok := in.GetMTime(); ok {
		c.mtime = mtime
	}
	n.fsys.fill(c, &out.Attr)
	return 0
}

func (n *node) Opendir(ctx context.Context) syscall.Errno {
	_, errno := n.lock()
	defer n.unlock()
	return errno
}

func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	d, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return nil, errno
	}
	var list []fuse.DirEntry
	for _, name := range slices.Sorted(maps.Keys(d.entries)) {
		c := d.entries[name]
		mode := uint32(syscall.S_IFREG)
		if c.dir {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: name, Mode: mode, Ino: c.id})
	}
	return gofs.NewListDirStream(list), 0
}
