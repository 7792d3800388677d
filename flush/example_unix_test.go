//go:build unix

package flush_test

import (
	"os/exec"
	"syscall"
)

// agentCommand is a long-running agent for the examples, in a process
// group of its own (Setsid), so Stop reaches what it starts.
func agentCommand() *exec.Cmd {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}
