//go:build linux

package powercut

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The operations that change the model. Each checks the power and the
// trigger before it changes anything (f.before) and counts itself after
// (f.after).

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	d, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return nil, nil, 0, errno
	}
	f := n.fsys
	if c, errno := lookup(d, name); errno == 0 {
		if flags&syscall.O_EXCL != 0 {
			return nil, nil, 0, syscall.EEXIST
		}
		if flags&syscall.O_TRUNC != 0 {
			if errno := f.before(Truncate); errno != 0 {
				return nil, nil, 0, errno
			}
			c.truncate(0)
			f.after(Truncate)
		}
		return n.child(ctx, c, out), nil, fuse.FOPEN_DIRECT_IO, 0
	} else if errno != syscall.ENOENT {
		return nil, nil, 0, errno
	}
	if errno := f.before(Create); errno != 0 {
		return nil, nil, 0, errno
	}
	c := f.m.newInode(false, mode)
	f.m.do(&dirOp{to: d, toName: name, node: c})
	f.after(Create)
	return n.child(ctx, c, out), nil, fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return nil, errno
	}
	if _, errno := lookup(d, name); errno != syscall.ENOENT {
		if errno == 0 {
			errno = syscall.EEXIST
		}
		return nil, errno
	}
	f := n.fsys
	if errno := f.before(Mkdir); errno != 0 {
		return nil, errno
	}
	c := f.m.newInode(true, mode)
	f.m.do(&dirOp{to: d, toName: name, node: c})
	f.after(Mkdir)
	return n.child(ctx, c, out), 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, false)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, true)
}

func (n *node) remove(name string, dir bool) syscall.Errno {
	d, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return errno
	}
	c, errno := lookup(d, name)
	switch {
	case errno != 0:
		return errno
	case dir && !c.dir:
		return syscall.ENOTDIR
	case !dir && c.dir:
		return syscall.EISDIR
	case dir && len(c.entries) > 0:
		return syscall.ENOTEMPTY
	}
	op := Unlink
	if dir {
		op = Rmdir
	}
	f := n.fsys
	if errno := f.before(op); errno != 0 {
		return errno
	}
	f.m.do(&dirOp{from: d, fromName: name})
	f.after(op)
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	d1, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return errno
	}
	np, ok := newParent.(*node)
	if !ok || flags&^uint32(unix.RENAME_NOREPLACE) != 0 {
		return syscall.EINVAL // RENAME_EXCHANGE and RENAME_WHITEOUT are not modelled
	}
	d2, errno := np.live()
	if errno != 0 {
		return errno
	}
	o, errno := renameOp(d1, name, d2, newName, flags&unix.RENAME_NOREPLACE != 0)
	if errno != 0 || o == nil {
		return errno
	}
	f := n.fsys
	if errno := f.before(Rename); errno != 0 {
		return errno
	}
	f.m.do(o)
	f.after(Rename)
	return 0
}

func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	c, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return nil, 0, errno
	}
	if flags&syscall.O_TRUNC != 0 && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		f := n.fsys
		if errno := f.before(Truncate); errno != 0 {
			return nil, 0, errno
		}
		c.truncate(0)
		f.after(Truncate)
	}
	// Direct I/O: every read and write reaches the model, and no page of
	// a cycle before a cut is served from the kernel's cache.
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	c, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return nil, errno
	}
	if off >= int64(len(c.data)) {
		return fuse.ReadResultData(nil), 0
	}
	k := copy(dest, c.data[off:])
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *node) Write(ctx context.Context, fh gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	c, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return 0, errno
	}
	f := n.fsys
	if errno := f.before(Write); errno != 0 {
		return 0, errno
	}
	c.write(data, off)
	f.after(Write)
	return uint32(len(data)), 0
}

// Fsync is fsync(2) and fdatasync(2) of a file and fsync(2) of a
// directory (go-fuse sends FUSE_FSYNCDIR here too).
func (n *node) Fsync(ctx context.Context, fh gofs.FileHandle, flags uint32) syscall.Errno {
	c, errno := n.lock()
	defer n.unlock()
	if errno != 0 {
		return errno
	}
	f := n.fsys
	op := Fsync
	if c.dir {
		op = FsyncDir
	}
	if errno := f.before(op); errno != 0 {
		return errno
	}
	switch {
	case c.dir && !f.opts.IgnoreDirFsync:
		f.m.syncDir(c)
	case !c.dir && !f.opts.IgnoreFsync:
		c.syncFile()
	}
	f.after(op)
	return 0
}
