//go:build windows

package agent

import (
	"os/exec"
)

// shellCommand runs command with cmd /c.
func shellCommand(command string) *exec.Cmd { return exec.Command("cmd", "/c", command) }

// setGroup leaves the command as it is: qos.Start sets its priority class
// through SysProcAttr.CreationFlags.
func setGroup(*exec.Cmd) {}

// signalGroup kills the agent's process (Windows has no SIGTERM to send; its
// children are not reached).
func signalGroup(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
