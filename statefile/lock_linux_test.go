package statefile

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Options.Exclusive across processes: while a child holds the lock, Open
// fails with the path and the child's pid; after the child exits, or is
// killed with SIGKILL, the lock is taken over.
func TestExclusiveOtherProcess(t *testing.T) {
	if os.Getenv(childRoleEnv) == "lock" {
		lockChild(t, os.Getenv(childPathEnv))
		return
	}
	path := filepath.Join(t.TempDir(), "x.json")
	for _, end := range []string{"exit", "SIGKILL"} {
		t.Run(end, func(t *testing.T) {
			child := startProc(t, "TestExclusiveOtherProcess", "lock", path)
			child.expect("locked")
			s := NewStore(Options{Exclusive: true})
			_, err := Open[string](s, path)
			var le *LockedError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, ErrLocked)
			assert.Equal(t, LockedError{Path: path, PID: child.pid()}, *le)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), "process "+strconv.Itoa(child.pid()))
			if end == "exit" {
				child.exit()
			} else {
				child.kill()
			}
			f, err := Open[string](s, path)
			require.NoError(t, err, "the lock is taken over")
			assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", readFileT(t, path+lockSuffix))
			require.NoError(t, f.Save(end))
			require.NoError(t, s.Close(context.Background()))
		})
	}
}

// lockChild holds path's lock until its stdin ends.
func lockChild(t *testing.T, path string) {
	var out childOut
	s := NewStore(Options{Exclusive: true})
	_, err := Open[string](s, path)
	require.NoError(t, err)
	out.say("locked")
	for in := commands(); in.Scan(); {
	}
	require.NoError(t, s.Close(context.Background()))
	out.say("bye")
}

// A temp file that a live process is writing (it claims it) survives
// another Store's sweep; once that process is killed, the next sweep
// removes it.
func TestSweepSparesLiveProcess(t *testing.T) {
	if os.Getenv(childRoleEnv) == "claim" {
		claimChild(t, os.Getenv(childPathEnv))
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	temp := filepath.Join(dir, ".s.json4242")
	child := startProc(t, "TestSweepSparesLiveProcess", "claim", temp)
	child.expect("claimed")
	sweep(t, path)
	assert.FileExists(t, temp, "swept from under a live writer")
	child.kill()
	sweep(t, path)
	assert.NoFileExists(t, temp, "left by a dead writer")
}

// claimChild creates and claims the temp file path, as a save in flight
// does, and holds it until killed.
func claimChild(t *testing.T, path string) {
	var out childOut
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	claim, err := claimTemp(int(f.Fd()))
	require.NoError(t, err)
	require.GreaterOrEqual(t, claim, 0, "claimed on a filesystem with locks")
	out.say("claimed")
	for in := commands(); in.Scan(); {
	}
	unix.Close(claim)
	f.Close()
	out.say("bye")
}
