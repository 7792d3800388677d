package stall_test

// The FUSE tests use stall's exported API and faultfs only, so that this
// file can move as it is into a test harness of its own.

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/stall"
)

// fuseWatch watches the calling goroutine; the function it returns stops
// and returns the reports.
func fuseWatch(t *testing.T) (stop func() []stall.Report) {
	t.Helper()
	var (
		mu  sync.Mutex
		got []stall.Report
	)
	stopWatch, err := stall.Watch(stall.Options{OnReport: func(r stall.Report) {
		t.Logf("report: %v", r)
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}})
	require.NoError(t, err)
	t.Cleanup(stopWatch)
	return func() []stall.Report {
		stopWatch()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// fuseReleaseAfter releases h 50 ms after it has blocked an operation.
func fuseReleaseAfter(wg *sync.WaitGroup, h *faultfs.Hang) {
	wg.Go(func() {
		<-h.Blocked()
		t := time.NewTimer(50 * time.Millisecond)
		defer t.Stop()
		<-t.C
		h.Release()
	})
}

// fuseInStack reports whether r's stack runs through the function fn or
// a function literal of it.
func fuseInStack(r stall.Report, fn string) bool {
	return slices.ContainsFunc(r.Stack, func(f runtime.Frame) bool {
		return f.Function == fn || strings.HasPrefix(f.Function, fn+".func")
	})
}

// TestFUSESlowReadAndFsync: a read and an fsync that the FUSE daemon
// holds for 50 ms, on the watched goroutine, are each reported once, with
// the file's path and the test in the stack.
func TestFUSESlowReadAndFsync(t *testing.T) {
	fsys := faultfs.MountT(t)
	const name = "state.json"
	require.NoError(t, os.WriteFile(filepath.Join(fsys.Backing(), name), []byte(`{"theme":"dark"}`), 0o600))
	path := filepath.Join(fsys.Dir(), name)
	for _, tc := range []struct {
		op      faultfs.Op
		syscall string
		call    func(*os.File) error
	}{
		{faultfs.Read, "read", func(f *os.File) error { _, err := f.Read(make([]byte, 16)); return err }},
		{faultfs.Fsync, "fsync", (*os.File).Sync},
	} {
		t.Run(tc.syscall, func(t *testing.T) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			h := fsys.Hang(tc.op, faultfs.Base(name))
			var wg sync.WaitGroup
			fuseReleaseAfter(&wg, h)
			done := fuseWatch(t)
			err = tc.call(f)
			got := done()
			wg.Wait()
			require.NoError(t, err)

			require.Len(t, got, 1, "reports")
			rep := got[0]
			assert.Equal(t, "syscall", rep.Wait)
			assert.Equal(t, tc.syscall, rep.Syscall)
			assert.Equal(t, path, rep.Path)
			assert.GreaterOrEqual(t, rep.Duration, 45*time.Millisecond)
			assert.True(t, fuseInStack(rep, "github.com/offmain/offmain/reliability/stall_test.TestFUSESlowReadAndFsync"), "the test in the stack:\n%v", rep)
		})
	}
}

// TestFUSEMutexHeldAcrossSlowWrite: the watched goroutine waits 50 ms for
// a lock that another goroutine holds across a write the FUSE daemon
// holds; the wait is reported as the lock's, without a path, and the
// write, on the other goroutine, not at all.
func TestFUSEMutexHeldAcrossSlowWrite(t *testing.T) {
	fsys := faultfs.MountT(t)
	f, err := os.Create(filepath.Join(fsys.Dir(), "drafts.json"))
	require.NoError(t, err)
	defer f.Close()
	h := fsys.Hang(faultfs.Write, faultfs.Base("drafts.json"))
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		held = make(chan struct{})
	)
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
		close(held)
		f.Write([]byte(`{}`))
	})
	<-held
	<-h.Blocked()
	done := fuseWatch(t)
	fuseReleaseAfter(&wg, h)
	mu.Lock()
	//lint:ignore SA2001 the wait for the lock is what stall must report
	mu.Unlock()
	got := done()
	wg.Wait()

	require.Len(t, got, 1, "reports")
	rep := got[0]
	assert.Equal(t, "sync", rep.Wait)
	assert.Empty(t, rep.Path)
	assert.Equal(t, "github.com/offmain/offmain/reliability/stall_test.TestFUSEMutexHeldAcrossSlowWrite", rep.Stack[0].Function, "the call site")
}
