//go:build unix

package statefile

import (
	"io/fs"
	"syscall"
)

// fileStamp identifies one version of a file: where it lives, its size and
// its timestamps (see unchanged.go).
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

func stampOf(fi fs.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(sys.Dev), uint64(sys.Ino) //nolint:unconvert // int32 on some systems
		st.ctime = ctimeNanos(sys)
	}
	return st
}
