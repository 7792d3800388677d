//go:build unix

package stall_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// readSyscall is what a read of a blocking descriptor is reported as.
const readSyscall = "read"

// blockingPipe returns the two ends of a FIFO in a temporary directory,
// and its path. The read end is a blocking descriptor, which os reads
// with read(2) on the calling thread: a read with nothing to read waits
// in the system call, not in the runtime's poller.
func blockingPipe(t *testing.T) (r, w *os.File, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	// Opening the read end without O_NONBLOCK would wait for a writer
	// (fifo(7)); it is made blocking once the write end is open.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	w, err = os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fd, false))
	r = os.NewFile(uintptr(fd), path)
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w, path
}
