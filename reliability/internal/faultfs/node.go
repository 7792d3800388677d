//go:build linux

package faultfs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node whose file handles inject faults. go-fuse wraps
// every child through WrapChild, so the whole tree is made of nodes.
type node struct {
	*gofs.LoopbackNode
	fsys *server
}

var (
	_ gofs.NodeWrapChilder     = (*node)(nil)
	_ gofs.NodeOpener          = (*node)(nil)
	_ gofs.NodeCreater         = (*node)(nil)
	_ gofs.NodeTmpfiler        = (*node)(nil)
	_ gofs.NodeOpendirHandler  = (*node)(nil)
	_ gofs.NodeRenamer         = (*node)(nil)
	_ gofs.NodeCopyFileRanger  = (*node)(nil)
	_ gofs.FilePassthroughFder = (*file)(nil)
	_ gofs.FileFsyncdirer      = (*dir)(nil)
)

func (n *node) WrapChild(ctx context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*gofs.LoopbackNode), fsys: n.fsys}
}

// path returns the node's current path relative to the root, as given to
// a Match.
func (n *node) path() string {
	if n.IsRoot() {
		return "."
	}
	return n.Path(nil)
}

func (n *node) inject(ctx context.Context, op Op) syscall.Errno {
	return n.fsys.inject(ctx, op, n.path())
}

func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	return n.wrap(fh), fuseFlags, errno
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	ch, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return ch, fh, fuseFlags, errno
	}
	return ch, n.child(ch).wrap(fh), fuseFlags, errno
}

func (n *node) Tmpfile(ctx context.Context, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	ch, fh, fuseFlags, errno := n.LoopbackNode.Tmpfile(ctx, flags, mode, out)
	if errno != 0 {
		return ch, fh, fuseFlags, errno
	}
	return ch, n.child(ch).wrap(fh), fuseFlags, errno
}

// child returns the node of ch, a child of n.
func (n *node) child(ch *gofs.Inode) *node {
	if c, ok := ch.Operations().(*node); ok {
		return c
	}
	panic("faultfs: a child node was not made by WrapChild")
}

func (n *node) wrap(fh gofs.FileHandle) gofs.FileHandle {
	if lf, ok := fh.(*gofs.LoopbackFile); ok {
		return &file{LoopbackFile: lf, n: n}
	}
	return fh
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if ds, ok := fh.(dirStream); ok {
		return &dir{dirStream: ds, n: n}, fuseFlags, errno
	}
	return fh, fuseFlags, errno
}

func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if np, ok := newParent.(*node); ok {
		if errno := n.fsys.inject(ctx, Rename, join(n.path(), name), join(np.path(), newName)); errno != 0 {
			return errno
		}
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// CopyFileRange refuses, so that the copy falls back to reads and writes
// (in the kernel's vfs_copy_file_range or in the caller, as Go's io.Copy
// does) and [Write] faults apply to it. go-fuse's loopback would copy
// between the backing files, behind the daemon's Write.
func (n *node) CopyFileRange(ctx context.Context, fhIn gofs.FileHandle, offIn uint64, out *gofs.Inode, fhOut gofs.FileHandle, offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

// file is an open loopback file whose Read, Write, Fsync and Flush
// inject faults.
type file struct {
	*gofs.LoopbackFile
	n *node
}

// Read injects before reading. The kernel asks only for what its page
// cache lacks, and a file opened afresh has none of its pages cached:
// go-fuse's loopback answers an open without FOPEN_KEEP_CACHE ("don't
// invalidate the data cache on open", include/uapi/linux/fuse.h), so
// fuse_finish_open (fs/fuse/file.c) drops them.
func (f *file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if errno := f.n.inject(ctx, Read); errno != 0 {
		return nil, errno
	}
	return f.LoopbackFile.Read(ctx, dest, off)
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if errno := f.n.inject(ctx, Write); errno != 0 {
		return 0, errno
	}
	return f.LoopbackFile.Write(ctx, data, off)
}

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if errno := f.n.inject(ctx, Fsync); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Fsync(ctx, flags)
}

func (f *file) Flush(ctx context.Context) syscall.Errno {
	if errno := f.n.inject(ctx, Close); errno != 0 {
		return errno
	}
	return f.LoopbackFile.Flush(ctx)
}

// PassthroughFd declines FUSE passthrough, which go-fuse enables as root
// on kernels that have it (6.9 and later): the kernel would then read and
// write the backing file itself and never send FUSE_WRITE.
func (f *file) PassthroughFd() (int, bool) { return -1, false }

// dirStream is what go-fuse's loopback directory handle implements.
type dirStream interface {
	gofs.FileReaddirenter
	gofs.FileSeekdirer
	gofs.FileReleasedirer
	gofs.FileFsyncdirer
}

// dir is an open loopback directory whose Fsyncdir injects faults.
type dir struct {
	dirStream
	n *node
}

func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if errno := d.n.inject(ctx, Fsync); errno != 0 {
		return errno
	}
	return d.dirStream.Fsyncdir(ctx, flags)
}
