//go:build windows

package stall_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// readSyscall is what a read of a pipe is reported as.
const readSyscall = "ReadFile"

// blockingPipe returns the two ends of an anonymous pipe, and no path:
// os.Pipe's handles are synchronous, so a read with nothing to read waits
// in ReadFile on the calling thread.
func blockingPipe(t *testing.T) (r, w *os.File, path string) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w, ""
}
