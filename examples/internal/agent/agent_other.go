//go:build !unix && !windows

package agent

import "os/exec"

// shellCommand runs command with sh -c.
func shellCommand(command string) *exec.Cmd { return exec.Command("sh", "-c", command) }

// setGroup leaves the command as it is.
func setGroup(*exec.Cmd) {}

// signalGroup kills the agent's process.
func signalGroup(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
