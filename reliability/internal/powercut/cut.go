//go:build linux

package powercut

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// image is a file or directory as the disk holds it after power returns.
type image struct {
	dir      bool
	mode     uint32
	data     []byte
	children map[string]*image
}

// cut returns what the disk holds after a power cut of m, drawing from rng
// which pending directory operations survive and what each file that was
// written since its last fsync holds.
func (m *model) cut(rng *rand.Rand, forget bool) *image {
	dropped := make(map[key]bool)
	for _, o := range m.pending {
		keep := !forget && rng.IntN(2) == 0
		for _, k := range o.keys() {
			keep = keep && !dropped[k] // a name's operations survive in order: a prefix of them
		}
		if keep {
			o.applyDurable()
			continue
		}
		for _, k := range o.keys() {
			dropped[k] = true
		}
	}
	m.pending = nil
	return imageOf(m.root, rng, forget, make(map[*inode]bool))
}

// imageOf builds the image of n from the durable entries down. A
// directory reached twice (a directory rename that half survived) is kept
// at its first name only.
func imageOf(n *inode, rng *rand.Rand, forget bool, seen map[*inode]bool) *image {
	if !n.dir {
		return &image{mode: n.mode, data: survivor(n, rng, forget)}
	}
	seen[n] = true
	img := &image{dir: true, mode: n.mode, children: make(map[string]*image)}
	for _, name := range slices.Sorted(maps.Keys(n.durable)) {
		c := n.durable[name]
		if c.dir && seen[c] {
			continue
		}
		img.children[name] = imageOf(c, rng, forget, seen)
	}
	return img
}

// survivor draws what a file holds after the cut. A file not written
// since its last fsync keeps what it had. Otherwise the unsynced writes
// are lost whole (always, with forget) or torn: the new bytes up to a
// random boundary, which may be the end, and the old ones after it, at
// the old or the new size (bytes that neither had are zeros, as in a
// block allocated but never written).
func survivor(n *inode, rng *rand.Rand, forget bool) []byte {
	if !n.dirty {
		return n.synced
	}
	if forget || rng.IntN(2) == 0 {
		return n.synced
	}
	size := len(n.synced)
	if rng.IntN(2) == 0 {
		size = len(n.data)
	}
	k := rng.IntN(size + 1)
	out := make([]byte, size)
	for i := range out {
		src := n.synced
		if i < k {
			src = n.data
		}
		if i < len(src) {
			out[i] = src[i]
		}
	}
	return out
}

// write replaces the contents of the directory dir by img's.
func (img *image) write(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return img.writeChildren(dir)
}

func (img *image) writeChildren(dir string) error {
	for name, c := range img.children {
		p := filepath.Join(dir, name)
		if !c.dir {
			if err := os.WriteFile(p, c.data, os.FileMode(c.mode)); err != nil {
				return err
			}
			if err := os.Chmod(p, os.FileMode(c.mode)); err != nil { // WriteFile's mode is cut by the umask
				return err
			}
			continue
		}
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		if err := c.writeChildren(p); err != nil {
			return err
		}
		if err := os.Chmod(p, os.FileMode(c.mode)); err != nil {
			return err
		}
	}
	return nil
}

// load returns a model of the directory dir, all of it durable, as after
// power returns.
func load(dir string, epoch uint64, lastID *uint64) (*model, error) {
	m := &model{epoch: epoch, lastID: lastID}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	m.root = m.newInode(true, uint32(st.Mode().Perm()))
	if err := m.loadDir(m.root, dir); err != nil {
		return nil, fmt.Errorf("powercut: load %s: %w", dir, err)
	}
	return m, nil
}

func (m *model) loadDir(d *inode, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			return err
		}
		var c *inode
		switch {
		case e.IsDir():
			c = m.newInode(true, uint32(info.Mode().Perm()))
			if err := m.loadDir(c, p); err != nil {
				return err
			}
		case e.Type().IsRegular():
			c = m.newInode(false, uint32(info.Mode().Perm()))
			if c.data, err = os.ReadFile(p); err != nil {
				return err
			}
			c.synced = bytes.Clone(c.data)
		default:
			return errors.New(p + ": only regular files and directories are modelled")
		}
		d.entries[e.Name()] = c
		d.durable[e.Name()] = c
	}
	return nil
}
