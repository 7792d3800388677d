//go:build !unix && !windows

package qos

import (
	"os/exec"
	"sync/atomic"
)

// otherMember is a command the Group started. Here there is no SIGTERM and no
// way to see an exit: Stop kills the process, which then counts as exited.
type otherMember struct {
	cmd    *exec.Cmd
	killed atomic.Bool
}

func (g *Group) startMember(cmd *exec.Cmd, t Tier, m Mode) (member, error) {
	if err := start(cmd, t, m); err != nil {
		return nil, err
	}
	return &otherMember{cmd: cmd}, nil
}

func (m *otherMember) pid() int { return m.cmd.Process.Pid }

func (m *otherMember) done() bool { return m.killed.Load() }
func (m *otherMember) close()     {}

func (m *otherMember) terminate() {
	_ = m.cmd.Process.Kill()
	m.killed.Store(true)
}

func (m *otherMember) kill() []string { m.terminate(); return nil }

// stuck returns the processes left that refused SIGKILL: none here, where
// Stop does not read the tree's processes.
func (m *otherMember) stuck() []string { return nil }

func (m *otherMember) release() {}

// groupSys is what a Group keeps here: nothing.
type groupSys struct{}
