//go:build !unix

package flush_test

import "os/exec"

// agentCommand is a long-running agent for the examples: Windows has no
// sleep(1); ping waits a second between its 30 echoes of the loopback.
func agentCommand() *exec.Cmd { return exec.Command("ping", "-n", "30", "127.0.0.1") }
