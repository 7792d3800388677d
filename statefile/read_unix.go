//go:build unix && !aix

package statefile

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// readStateFile reads a state file for Load, a save's checks and a
// Flush's: open, fstat for the size, read, close, on a raw descriptor (see
// replaceFile for why not an *os.File). A rename over the path does not
// disturb an open file on Unix; Windows needs more (read_windows.go).
func readStateFile(name string) ([]byte, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, &fs.PathError{Op: "read", Path: name, Err: unix.EISDIR}
	}
	size := st.Size + 1 // one more: a read that returns 0 says the end came
	if int64(int(size)) != size || size < 1 {
		size = 512 // too large for this platform's int, or a size the filesystem does not know
	}
	data := make([]byte, 0, int(size))
	for {
		n, err := unix.Read(fd, data[len(data):cap(data)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		case n == 0:
			return data, nil
		}
		data = data[:len(data)+n]
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew since the fstat
		}
	}
}
