package statefile_test

// Case 4 of the reliability suite: a failing and a hanging disk, from
// internal/faultfs (a FUSE loopback with switchable faults). With EIO the
// error is reported and the old file stays intact. With an fsync that
// never returns, Save still returns at once, another path still loads and
// saves, Store.Flush and flush.Hook.Run return by their deadline naming
// the hung path, and once released the queued save lands.
//
// These are real system calls, which testing/synctest cannot wait on, so
// the deadlines are real: the test asserts that calls returned and what
// they named, and bounds durations only loosely (deadline + 1 s).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/reliability/internal/faultfs"
	"github.com/offmain/offmain/statefile"
)

func TestFaultyDiskEIO(t *testing.T) {
	for _, op := range []faultfs.Op{faultfs.Write, faultfs.Fsync, faultfs.Rename, faultfs.Close} {
		t.Run(op.String(), func(t *testing.T) {
			fsys := faultfs.MountT(t)
			s, f, log := statetest.OpenFull(t, fsys.Dir(), statefile.Durable)
			clear := fsys.Fail(op, syscall.EIO, faultfs.Base("state.json"))
			statetest.ExpectRefused(t, s, f, log, syscall.EIO, statetest.SaveOf(f, "lost to EIO"))
			statetest.ExpectRefused(t, s, f, log, syscall.EIO, statetest.SaveOf(f, "lost to EIO again"))
			assert.Equal(t, "\"the last good save\"\n", string(statetest.ReadBytes(t, filepath.Join(fsys.Backing(), "state.json"))),
				"the backing file keeps the last good save")
			clear()
			statetest.ExpectSaved(t, s, f, log, "after the fault cleared")
		})
	}
}

// rootDir selects the mount's root directory, where the tests' files are.
var rootDir = faultfs.Path(".")

// An fsync of the directory fails after the rename: the save is reported
// failed (it may not survive a power cut) though the new value is in
// place; the file is whole either way and no temp file is left. A corrupt
// file moved aside before such a failure is named where it went.
func TestFaultyDiskDirFsyncEIO(t *testing.T) {
	fsys := faultfs.MountT(t)
	s, f, log := statetest.OpenFull(t, fsys.Dir(), statefile.Durable)
	clear := fsys.Fail(faultfs.Fsync, syscall.EIO, rootDir)
	require.NoError(t, f.Save("renamed, not synced"))
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, s.Flush(context.Background()), &nd)
	assert.ErrorIs(t, nd.Failed[f.Path()], syscall.EIO)
	assert.Len(t, log.Drain(), 1, "OnError calls")
	got, err := f.Load(context.Background())
	require.NoError(t, err, "the file is whole")
	assert.Equal(t, "renamed, not synced", got)
	assert.Empty(t, statetest.TempNames(t, fsys.Dir(), "state.json"))

	require.NoError(t, os.WriteFile(f.Path(), []byte("{torn"), 0o600))
	_, err = f.Load(context.Background())
	var ce *statefile.CorruptError
	require.ErrorAs(t, err, &ce)
	aside := statetest.CorruptNames(t, fsys.Dir(), "state.json")
	require.Len(t, aside, 1, "the corrupt file was moved aside")
	assert.Equal(t, filepath.Join(fsys.Dir(), aside[0]), ce.Aside, "CorruptError.Aside names where the bytes are: %v", err)
	clear()
}

// Point 8: a Remove fsyncs the directory too, so an EIO from that fsync
// is reported like a save's (the file is gone, but its removal may not
// survive a power cut).
func TestFaultyDiskRemoveDirFsyncEIO(t *testing.T) {
	fsys := faultfs.MountT(t)
	s, f, log := statetest.OpenFull(t, fsys.Dir(), statefile.Durable)
	clear := fsys.Fail(faultfs.Fsync, syscall.EIO, rootDir)
	defer clear()
	require.NoError(t, f.Remove())
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, s.Flush(context.Background()), &nd, "got no error from a Remove whose directory fsync failed")
	assert.ErrorIs(t, nd.Failed[f.Path()], syscall.EIO)
	assert.Len(t, log.Drain(), 1, "OnError calls")
	assert.NoFileExists(t, f.Path())
}

// slack bounds how late a call may return after its deadline: loose, as
// the suite runs beside other packages on 2 cores.
const slack = time.Second

func TestFaultyDiskHangingFsync(t *testing.T) {
	fsys := faultfs.MountT(t)
	log := statetest.NewErrorLog()
	s := statefile.NewStore(statefile.Options{OnError: log.OnError}) // Durable, MaxParallel 4
	hung, err := statefile.Open[string](s, filepath.Join(fsys.Dir(), "hung.json"))
	require.NoError(t, err)
	other, err := statefile.Open[string](s, filepath.Join(fsys.Dir(), "other.json"))
	require.NoError(t, err)
	statetest.ExpectSaved(t, s, hung, log, "hung: before")
	statetest.ExpectSaved(t, s, other, log, "other: before")

	h := fsys.Hang(faultfs.Fsync, faultfs.Base("hung.json"))
	t.Cleanup(h.Release)
	require.NoError(t, hung.Save("hung: first while hung"))
	<-h.Blocked() // hung.json's writer is now inside fsync(2) of its temp file
	temps := statetest.TempNames(t, fsys.Backing(), "hung.json")
	require.Len(t, temps, 1, "the temp file being fsynced")
	statetest.RequireMode(t, filepath.Join(fsys.Backing(), temps[0]), 0o600)

	start := time.Now()
	for i := range 1000 {
		require.NoError(t, hung.Save(fmt.Sprintf("hung: queued %d", i)))
	}
	assert.Less(t, time.Since(start), slack, "1000 Saves while the fsync hangs")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := other.Load(ctx)
	require.NoError(t, err, "Load of another path while one fsync hangs")
	assert.Equal(t, "other: before", got)
	require.NoError(t, other.Save("other: during"))
	require.NoError(t, other.Flush(ctx), "Flush of another path while one fsync hangs")

	checkFlushNamesHung(t, s, hung.Path())
	checkHookNamesHung(t, s, hung.Path())

	h.Release()
	require.NoError(t, s.Flush(context.Background()), "Flush once released")
	assert.Empty(t, log.Drain(), "a hang is not a failure")
	got, err = hung.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "hung: queued 999", got, "the last save queued during the hang landed")
	got, err = other.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "other: during", got)
	assert.Empty(t, statetest.TempNames(t, fsys.Backing(), "hung.json"))
	require.NoError(t, s.Close(context.Background()))
}

// TestFaultyDiskHangingFsyncAllWriters: with MaxParallel 1 the one writer
// hangs in fsync(2), and another path still loads, saves and flushes, once
// the hung writer counts as stuck (about a second), instead of never.
func TestFaultyDiskHangingFsyncAllWriters(t *testing.T) {
	fsys := faultfs.MountT(t)
	log := statetest.NewErrorLog()
	s := statefile.NewStore(statefile.Options{OnError: log.OnError, MaxParallel: 1})
	hung, err := statefile.Open[string](s, filepath.Join(fsys.Dir(), "hung.json"))
	require.NoError(t, err)
	other, err := statefile.Open[string](s, filepath.Join(fsys.Dir(), "other.json"))
	require.NoError(t, err)
	statetest.ExpectSaved(t, s, other, log, "other: before")

	h := fsys.Hang(faultfs.Fsync, faultfs.Base("hung.json"))
	t.Cleanup(h.Release)
	require.NoError(t, hung.Save("hung: while hung"))
	<-h.Blocked() // the Store's only writer is now inside fsync(2)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := other.Load(ctx)
	require.NoError(t, err, "Load of another path while the only writer hangs")
	assert.Equal(t, "other: before", got)
	require.NoError(t, other.Save("other: during"))
	require.NoError(t, other.Flush(ctx), "Flush of another path while the only writer hangs")

	h.Release()
	require.NoError(t, s.Flush(context.Background()), "Flush once released")
	assert.Empty(t, log.Drain(), "a hang is not a failure")
	got, err = hung.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "hung: while hung", got)
	require.NoError(t, s.Close(context.Background()))
}

// checkFlushNamesHung: Store.Flush returns by its deadline with the hung
// path, and only it, pending.
func checkFlushNamesHung(t *testing.T, s *statefile.Store, path string) {
	t.Helper()
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err := s.Flush(ctx)
	took := time.Since(start)
	assert.Less(t, took, deadline+slack, "Store.Flush returned %v after a %v deadline", took, deadline)
	var nd *statefile.NotDrainedError
	require.ErrorAs(t, err, &nd)
	assert.Equal(t, []string{path}, nd.Pending)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// checkHookNamesHung: the quit-time hook returns by its deadline, not
// drained, and its report names the hung path.
func checkHookNamesHung(t *testing.T, s *statefile.Store, path string) {
	t.Helper()
	const deadline = 300 * time.Millisecond
	hook := flush.New(flush.Options{Timeout: deadline})
	hook.Add("state", s)
	start := time.Now()
	rep := hook.Run()
	took := time.Since(start)
	assert.Less(t, took, deadline+slack, "Hook.Run returned %v after a %v deadline", took, deadline)
	assert.False(t, rep.Saved)
	require.Len(t, rep.Items, 1)
	assert.Error(t, rep.Items[0].Err)
	assert.ErrorIs(t, rep.Items[0].Err, context.DeadlineExceeded)
	var nd *statefile.NotDrainedError
	if assert.True(t, errors.As(rep.Items[0].Err, &nd), "the report's error names no path: %v", rep.Items[0].Err) {
		assert.Equal(t, []string{path}, nd.Pending)
	}
	assert.Contains(t, rep.String(), path, "the one-line report names the hung path")
}
