//go:build linux

package powercut

import (
	"bytes"
	"syscall"
	"time"
)

// inode is a file or directory of the model. Every field is guarded by the
// FS's mu.
type inode struct {
	id    uint64
	dir   bool
	mode  uint32 // permission bits; not modelled across a cut (kept as they are)
	mtime time.Time
	epoch uint64 // the power cycle it belongs to; after a cut it is gone (EIO)

	data   []byte // file: the content a read sees
	synced []byte // file: the content at its last fsync, the part a cut keeps
	dirty  bool   // file: written or truncated since its last fsync

	entries map[string]*inode // directory: the entries a lookup sees
	durable map[string]*inode // directory: the entries a cut keeps, unless a pending dirOp changes them
}

// dirOp is a directory operation that is not durable yet: it removes the
// entry fromName of from (if from is set), then points the entry toName of
// to at node (if to is set). Create and mkdir set only to, unlink and
// rmdir only from, rename both; so a rename is one atomic step, and a
// rename over a name replaces the old entry by the new one.
type dirOp struct {
	from, to         *inode
	fromName, toName string
	node             *inode
}

// key names one directory entry. Two dirOps depend on each other when
// they share a key: the later one changes what the earlier one made.
type key struct {
	dir  *inode
	name string
}

func (o *dirOp) keys() []key {
	var ks []key
	if o.from != nil {
		ks = append(ks, key{o.from, o.fromName})
	}
	if o.to != nil {
		ks = append(ks, key{o.to, o.toName})
	}
	return ks
}

func (o *dirOp) touches(d *inode) bool { return o.from == d || o.to == d }

// applyLive changes what lookups see.
func (o *dirOp) applyLive() {
	if o.from != nil {
		delete(o.from.entries, o.fromName)
	}
	if o.to != nil {
		o.to.entries[o.toName] = o.node
	}
}

// applyDurable changes what a cut keeps.
func (o *dirOp) applyDurable() {
	if o.from != nil {
		delete(o.from.durable, o.fromName)
	}
	if o.to != nil {
		o.to.durable[o.toName] = o.node
	}
}

// model is the filesystem of one power cycle: the live tree and, beside
// it, what a cut would keep.
type model struct {
	root    *inode
	epoch   uint64
	lastID  *uint64  // shared by every cycle, so that inode numbers are never reused
	pending []*dirOp // not durable yet, in the order they happened; per key, a suffix of its history
}

func (m *model) newInode(dir bool, mode uint32) *inode {
	*m.lastID++
	n := &inode{id: *m.lastID, dir: dir, mode: mode & 0o7777, mtime: time.Now(), epoch: m.epoch}
	if dir {
		n.entries = make(map[string]*inode)
		n.durable = make(map[string]*inode)
	}
	return n
}

// do applies a directory operation to the live tree and keeps it pending.
func (m *model) do(o *dirOp) {
	o.applyLive()
	m.pending = append(m.pending, o)
}

// write writes p at off, zero-filling a gap, as pwrite(2) does.
func (n *inode) write(p []byte, off int64) {
	if end := int(off) + len(p); end > len(n.data) {
		n.data = append(n.data, make([]byte, end-len(n.data))...)
	}
	copy(n.data[off:], p)
	n.dirty = true
	n.mtime = time.Now()
}

// truncate sets the file's size, as ftruncate(2) does.
func (n *inode) truncate(size int) {
	if size <= len(n.data) {
		n.data = n.data[:size:size]
	} else {
		n.data = append(n.data, make([]byte, size-len(n.data))...)
	}
	n.dirty = true
	n.mtime = time.Now()
}

// syncFile is fsync(2) or fdatasync(2) of a file: its content becomes
// durable, its entries in directories do not.
func (n *inode) syncFile() {
	n.synced = bytes.Clone(n.data)
	n.dirty = false
}

// syncDir is fsync(2) of directory d: every pending operation on d's
// entries becomes durable, with the earlier pending operations it depends
// on (a rename of a name another directory's create made, say), so that a
// cut still finds every entry's history in order.
func (m *model) syncDir(d *inode) {
	need := make(map[key]bool)
	sel := make([]bool, len(m.pending))
	for i := len(m.pending) - 1; i >= 0; i-- {
		o := m.pending[i]
		hit := o.touches(d)
		for _, k := range o.keys() {
			hit = hit || need[k]
		}
		if hit {
			sel[i] = true
			for _, k := range o.keys() {
				need[k] = true
			}
		}
	}
	rest := m.pending[:0]
	for i, o := range m.pending {
		if sel[i] {
			o.applyDurable()
		} else {
			rest = append(rest, o)
		}
	}
	clear(m.pending[len(rest):])
	m.pending = rest
}

// lookup returns the entry name of directory d.
func lookup(d *inode, name string) (*inode, syscall.Errno) {
	if !d.dir {
		return nil, syscall.ENOTDIR
	}
	if c := d.entries[name]; c != nil {
		return c, 0
	}
	return nil, syscall.ENOENT
}

// renameOp checks a rename(2) of d1/n1 to d2/n2 on the live tree and
// returns the operation.
func renameOp(d1 *inode, n1 string, d2 *inode, n2 string, noReplace bool) (*dirOp, syscall.Errno) {
	src, errno := lookup(d1, n1)
	if errno != 0 {
		return nil, errno
	}
	if !d2.dir {
		return nil, syscall.ENOTDIR
	}
	if dst := d2.entries[n2]; dst != nil {
		switch {
		case dst == src:
			return nil, 0 // the same file: rename(2) does nothing
		case noReplace:
			return nil, syscall.EEXIST
		case src.dir && !dst.dir:
			return nil, syscall.ENOTDIR
		case !src.dir && dst.dir:
			return nil, syscall.EISDIR
		case dst.dir && len(dst.entries) > 0:
			return nil, syscall.ENOTEMPTY
		}
	}
	return &dirOp{from: d1, fromName: n1, to: d2, toName: n2, node: src}, 0
}
