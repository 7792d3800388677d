//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// shellCommand runs command with sh -c.
func shellCommand(command string) *exec.Cmd { return exec.Command("/bin/sh", "-c", command) }

// setGroup puts the agent in a process group of its own, so that stop
// reaches everything it started and a signal meant for the app's terminal
// group does not reach the agent.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM, or SIGKILL if kill, to the agent's group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
