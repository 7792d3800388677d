//go:build !unix

package statefile

import "io/fs"

// fileStamp is size and modification time where os.Lstat gives no inode
// (Windows: a save moves a new file over the path, whose mtime is its own
// write's).
type fileStamp struct {
	size  int64
	mtime int64 // nanoseconds
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
