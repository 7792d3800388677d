//go:build darwin

package qos

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInspectOtherProcessBackground checks that Inspect does not claim a
// PRIO_DARWIN_BG child is in the default policy: xnu answers
// getpriority(PRIO_DARWIN_PROCESS, pid) with the caller's state, so Inspect
// can only leave Policy unknown for another process. Not run in this
// repository's CI (Linux only).
func TestInspectOtherProcessBackground(t *testing.T) {
	cmd := exec.Command("/bin/cat")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, Start(cmd, Agent, ModeBackground)) // taskpolicy -b
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Empty(t, a.Policy, "a background child's policy: got %q, want \"\" (unknown)", a.Policy)
}
