//go:build unix

package stall_test

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/stall"
)

// TestSlowOpen opens a FIFO for reading, which waits in open(2) until a
// writer opens it (fifo(7)): on Linux the report's path comes from the
// call's path argument, read from the process's memory, not from a
// descriptor.
func TestSlowOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	var wg sync.WaitGroup
	done := watch(t, stall.Options{})
	wg.Go(func() {
		t := time.NewTimer(50 * time.Millisecond)
		defer t.Stop()
		<-t.C
		if w, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	})
	f, err := openFile(path)
	got := done()
	wg.Wait()
	require.NoError(t, err)
	f.Close()

	require.Len(t, got, 1, "reports")
	rep := got[0]
	assert.Equal(t, "syscall", rep.Wait)
	assert.Equal(t, funcName(openFile), rep.Stack[0].Function, "the call site")
	if runtime.GOOS == "linux" {
		assert.Equal(t, "openat", rep.Syscall)
		assert.Equal(t, path, rep.Path)
	}
}

func openFile(path string) (*os.File, error) { return os.Open(path) }
