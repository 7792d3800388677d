package statefile

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Options.Exclusive within one process: a second Store is refused like a
// second process (flock locks belong to an open file, not to a process),
// with an error naming the path and the holder's pid; Close releases the
// lock; Opens of the locked path in the holding Store share it.
func TestExclusiveSecondStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	s1 := NewStore(Options{Exclusive: true})
	f1, err := Open[string](s1, path)
	require.NoError(t, err)
	_, err = Open[string](s1, path)
	require.NoError(t, err, "the holding Store opens its path again")
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", readFileT(t, path+lockSuffix), "the lock file holds the pid")

	s2 := NewStore(Options{Exclusive: true})
	_, err = Open[string](s2, path)
	require.ErrorIs(t, err, ErrLocked)
	var le *LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, LockedError{Path: path, PID: os.Getpid()}, *le)
	assert.Equal(t, "statefile: "+path+" is locked by process "+strconv.Itoa(os.Getpid())+" (lock file "+path+".lock)", err.Error())
	_, err = Open[string](NewStore(Options{}), path)
	assert.NoError(t, err, "a Store without Exclusive is not refused: the lock is advisory")

	require.NoError(t, f1.Save("one"))
	require.NoError(t, s1.Close(context.Background()))
	f2, err := Open[string](s2, path)
	require.NoError(t, err, "the lock is free after Close")
	v, err := f2.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "one", v)
	require.NoError(t, s2.Close(context.Background()))
	assert.Equal(t, "statefile: /x is locked by an unknown process (lock file /x.lock)", (&LockedError{Path: "/x"}).Error())
}

// An Exclusive Open creates the missing directory for its lock file.
func TestExclusiveCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "x.json")
	s := NewStore(Options{Exclusive: true})
	_, err := Open[int](s, path)
	require.NoError(t, err)
	st, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, osPerm(0o700, true), st.Mode().Perm())
	require.NoError(t, s.Close(context.Background()))
}

// A Close that gave up on its deadline keeps the lock of the path still
// being written until its writer finishes, so no second Store writes
// meanwhile; then the lock is free.
func TestExclusiveLockOutlivesUndrainedClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slow.json")
		s := NewStore(Options{Exclusive: true})
		d := newFakeDisk(s, true)
		f, err := Open[int](s, path)
		require.NoError(t, err)
		require.NoError(t, f.Save(1))
		synctest.Wait() // the writer is inside the held commit
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.ErrorIs(t, s.Close(ctx), context.DeadlineExceeded)
		other := NewStore(Options{Exclusive: true})
		_, err = Open[int](other, path)
		require.ErrorIs(t, err, ErrLocked, "locked while the save is in flight")
		close(d.hold)
		synctest.Wait()
		_, err = Open[int](other, path)
		require.NoError(t, err, "free once the writer went idle")
		require.NoError(t, other.Close(context.Background()))
	})
}

// Close releases the lock of a drained path before it returns, even while
// the path's writer is still busy with a Load.
func TestExclusiveCloseReleasesDrainedLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "busy.json")
		s := NewStore(Options{Exclusive: true})
		newFakeDisk(s, false)
		read, release := s.hooks.readFile, make(chan struct{})
		var held atomic.Bool
		s.hooks.readFile = func(p string) ([]byte, error) {
			if !held.Swap(true) { // the Load's read; the Close's check of the file reads at once
				<-release
			}
			return read(p)
		}
		f, err := Open[int](s, path)
		require.NoError(t, err)
		require.NoError(t, f.Save(1))
		loaded := make(chan int)
		go func() { v, _ := f.Load(context.Background()); loaded <- v }()
		synctest.Wait() // the save is done; the writer waits in the Load's read
		require.NoError(t, s.Close(context.Background()))
		other := NewStore(Options{Exclusive: true})
		_, err = Open[int](other, path)
		require.NoError(t, err, "the lock of a drained path is free when Close returns")
		close(release)
		assert.Equal(t, 1, <-loaded)
		require.NoError(t, other.Close(context.Background()))
	})
}

// A writer that goes idle releases the lock of a closed Store only if no
// save is queued or running: between its idle check and the release
// another writer may have taken a save queued just before Close, which
// must still run under the lock.
func TestExclusiveIdleReleaseSparesQueuedSave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "race.json")
		s := NewStore(Options{Exclusive: true})
		d := newFakeDisk(s, true)
		f, err := Open[int](s, path)
		require.NoError(t, err)
		require.NoError(t, f.Save(1))
		synctest.Wait() // a writer is inside the held commit
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.ErrorIs(t, s.Close(ctx), context.DeadlineExceeded)
		f.q.releaseIfDrained() // what a writer that went idle just before the Save does late
		other := NewStore(Options{Exclusive: true})
		_, err = Open[int](other, path)
		require.ErrorIs(t, err, ErrLocked, "lock released while a save is in flight")
		close(d.hold)
		synctest.Wait()
		_, err = Open[int](other, path)
		require.NoError(t, err, "free once the writer went idle")
		require.NoError(t, other.Close(context.Background()))
	})
}
