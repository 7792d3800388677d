//go:build linux

package qos

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// loweredLocker is a debug aid for an application's tests: it wraps a lock
// that interactive work takes and reports each Lock called on a thread
// lowered below the process's main thread, as inside [Do], where holding
// it makes the GUI wait behind that thread
// (BenchmarkLockBehindLoweredHolder). Each Lock costs one sched_getattr(2).
type loweredLocker struct {
	sync.Locker
	report func(how string) // called with how the thread is lowered
}

func (l loweredLocker) Lock() {
	if how := threadLowered(); how != "" {
		l.report(how)
	}
	l.Locker.Lock()
}

// threadLowered says how the calling thread runs lower than the main
// thread ("SCHED_IDLE", "nice 19"), or returns "" if it does not. Linux
// keeps both per thread (sched(7)); sched_getattr(2) with pid 0 reads the
// calling thread, and with the process id the main thread.
func threadLowered() string {
	self, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return ""
	}
	main, err := unix.SchedGetAttr(os.Getpid(), 0)
	if err != nil {
		return ""
	}
	switch {
	case self.Policy == unix.SCHED_IDLE && main.Policy != unix.SCHED_IDLE:
		return "SCHED_IDLE"
	case self.Nice > main.Nice:
		return fmt.Sprintf("nice %d", self.Nice)
	}
	return ""
}

// loweredLocker reports a lock taken inside Do in the modes that lower the
// thread, and no other.
func TestLoweredLockerReportsLockInsideDo(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		want []string
	}{
		{ModeOff, nil},
		{ModeUtility, []string{"nice 19"}},
		{ModeBackground, []string{"SCHED_IDLE"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			var (
				mu     sync.Mutex
				passes int // guarded by mu, as the GUI's state would be
				got    []string
			)
			l := loweredLocker{Locker: &mu, report: func(how string) { got = append(got, how) }}
			l.Lock()
			passes++
			l.Unlock()
			require.Empty(t, got, "a Lock outside Do was reported")
			require.NoError(t, Do(Background, tc.mode, func() {
				l.Lock()
				passes++
				l.Unlock()
			}))
			assert.Equal(t, tc.want, got, "reports of a Lock inside Do(Background, %s)", tc.mode)
			assert.Equal(t, 2, passes)
		})
	}
}
