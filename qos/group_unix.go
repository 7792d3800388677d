//go:build unix

package qos

import (
	"os/exec"
	"syscall"
)

// ownGroup reports whether cmd leads a process group of its own: a new
// session (setsid(2)) or setpgid(2) with Pgid 0.
func ownGroup(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	return a != nil && (a.Setsid || a.Setpgid && a.Pgid == 0)
}

// signal sends SIGTERM, or SIGKILL if kill, to the member's process group
// when it leads one, else to its process. The caller has just seen the
// process still running, so the group's id, its pid, is not yet free for
// reuse (a pid stays taken while a process group has it as id).
func (m *member) signal(kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if m.group {
		_ = syscall.Kill(-m.cmd.Process.Pid, sig)
		return
	}
	_ = m.cmd.Process.Signal(sig)
}
