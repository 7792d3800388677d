//go:build linux

package qos

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// onLoweredThread runs check on a thread that prep has changed, through
// runLowered, so the thread is retired afterwards (and never the main one).
func onLoweredThread(t *testing.T, prep func(tid int) error, check func(tid int)) {
	t.Helper()
	require.NoError(t, runLowered(
		func() (func() error, error) { return nil, prep(unix.Gettid()) },
		func() error { check(unix.Gettid()); return nil },
	))
}

func setRawIOPrio(tid int, v uintptr) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), v); errno != 0 {
		return errno
	}
	return nil
}

// TestIOPrioHint checks that the I/O priority hint, bits 3-12 of an I/O
// priority since Linux 6.5 (include/uapi/linux/ioprio.h, IOPRIO_HINT_SHIFT),
// is not read as part of the level: a best-effort 0 thread with a hint is
// best-effort 0, and is lowered to best-effort 7.
func TestIOPrioHint(t *testing.T) {
	const hint = 1 << 3 // IOPRIO_HINT_DEV_DURATION_LIMIT_1
	err := runLowered(
		func() (func() error, error) {
			return nil, setRawIOPrio(unix.Gettid(), ioprioClassBE<<ioprioClassShift|hint)
		},
		func() error {
			tid := unix.Gettid()
			c, l, err := ioPrio(tid)
			require.NoError(t, err)
			assert.Equal(t, [2]int{ioprioClassBE, 0}, [2]int{c, l}, "class and level: got %d/%d, want best-effort 0", c, l)
			require.NoError(t, lowerIOPrio(tid, ioprioClassBE, 7))
			c, l, err = ioPrio(tid)
			require.NoError(t, err)
			assert.Equal(t, [2]int{ioprioClassBE, 7}, [2]int{c, l}, "after lowering: got %d/%d, want best-effort 7", c, l)
			return nil
		})
	if errors.Is(err, unix.EINVAL) && !kernelAtLeast(t, 6, 5) {
		// Before 6.5 (where no stable update brought hints back)
		// ioprio_check_cap rejects any bit above the level.
		t.Skipf("this kernel rejects I/O priority hints (ioprio_set with a hint: %v; they came in Linux 6.5)", err)
	}
	require.NoError(t, err)
}

// TestLowerIOPrioNeverRaises checks the promise of setting.apply for a
// thread without an I/O class of its own: BFQ serves it by its CPU policy
// and nice value (see effectiveIOPrio), so a SCHED_IDLE thread there already
// does idle I/O and must not be given best-effort 7, as the threads of a
// daemon started under `chrt --idle 0` were by EnterServing.
func TestLowerIOPrioNeverRaises(t *testing.T) {
	onLoweredThread(t, func(tid int) error { return setIdle(tid, 0) }, func(tid int) {
		c, _, err := ioPrio(tid)
		require.NoError(t, err)
		require.Equal(t, ioprioClassNone, c, "precondition: a fresh thread has no I/O class of its own")
		require.NoError(t, settingFor(Serving, ModeUtility).apply(tid))
		c, l, err := ioPrio(tid)
		require.NoError(t, err)
		assert.Equal(t, ioprioClassNone, c, "a SCHED_IDLE thread's I/O: got class %d level %d, want it left at none (served as idle)", c, l)
	})
	// A nice-0 SCHED_OTHER thread without a class is served as best-effort
	// 4, and is lowered.
	onLoweredThread(t, func(int) error { return nil }, func(tid int) {
		require.NoError(t, settingFor(Serving, ModeUtility).apply(tid))
		c, l, err := ioPrio(tid)
		require.NoError(t, err)
		assert.Equal(t, [2]int{ioprioClassBE, 7}, [2]int{c, l}, "got %d/%d, want best-effort 7", c, l)
	})
}

// kernelAtLeast reports whether the running kernel's release is at least
// major.minor (uname(2)).
func kernelAtLeast(t *testing.T, major, minor int) bool {
	t.Helper()
	var u unix.Utsname
	require.NoError(t, unix.Uname(&u))
	var ma, mi int
	_, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	require.NoError(t, err)
	return ma > major || ma == major && mi >= minor
}
