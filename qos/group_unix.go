//go:build unix

package qos

import (
	"os/exec"
	"syscall"
)

// withGroup gives cmd a process group of its own, in a copy of its
// SysProcAttr, unless the caller chose one: a new session (setsid(2)),
// setpgid(2), or a terminal's foreground group. A command in the app's own
// group gets the signals meant for the app's terminal (^C) and leaves Stop
// no group to signal.
func withGroup(cmd *exec.Cmd) {
	attr := syscall.SysProcAttr{}
	if a := cmd.SysProcAttr; a != nil {
		if a.Setsid || a.Setpgid || a.Foreground {
			return
		}
		attr = *a
	}
	attr.Setpgid, attr.Pgid = true, 0
	cmd.SysProcAttr = &attr
}

// ownGroup reports whether cmd leads a process group of its own: a new
// session (setsid(2)) or setpgid(2) with Pgid 0.
func ownGroup(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	return a != nil && (a.Setsid || a.Setpgid && a.Pgid == 0)
}
