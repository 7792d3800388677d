//go:build linux

package qos

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// lowerTo returns the lowerFunc for s. The thread is never put back: a
// lowered nice value cannot be raised again without privilege.
func lowerTo(s setting) lowerFunc {
	return func() (func() error, error) { return nil, s.apply(unix.Gettid()) }
}

// isMainThread reports whether the calling thread is the process's main
// thread, whose thread id is the process id (gettid(2)).
func isMainThread() bool { return unix.Gettid() == unix.Getpid() }

// start is the package's Start: a step that fails after the command
// started is logged.
func start(cmd *exec.Cmd, t Tier, m Mode) error {
	return startAt(cmd, settingFor(t, m), &startOpts{fg: -1, report: logError})
}

// logError is where an error after start goes without a Group's OnError.
func logError(err error) { slog.Default().Warn("qos: error", slog.Any("err", err)) }

func do(t Tier, m Mode, fn func()) error {
	s := settingFor(t, m)
	if s == (setting{}) {
		fn()
		return nil
	}
	return runLowered(lowerTo(s), func() error { fn(); return nil })
}

// enterServing sets I/O best-effort 7 on every thread of this process. A
// thread created meanwhile copies the priority of the thread that created it,
// which may not have been lowered yet, so the pass repeats until it changes
// nothing (bounded: threads are created rarely).
func enterServing() error {
	s := settingFor(Serving, ModeUtility)
	for range 10 {
		tids, err := tasks(os.Getpid())
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			c, l, err := effectiveIOPrio(tid)
			if errors.Is(err, unix.ESRCH) || err == nil && ioRank(c, l) >= ioRank(s.ioClass, s.ioLevel) {
				continue
			}
			if err := s.apply(tid); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}
