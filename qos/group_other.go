//go:build !unix && !windows

package qos

import (
	"os/exec"
	"sync/atomic"
)

// member is a command the Group started. Here there is no SIGTERM and no
// way to see an exit: Stop kills the process, which then counts as exited.
type member struct {
	cmd    *exec.Cmd
	killed atomic.Bool
}

func (g *Group) startMember(cmd *exec.Cmd, t Tier, m Mode) (*member, error) {
	if err := g.Options.Start(cmd, t, m); err != nil {
		return nil, err
	}
	return &member{cmd: cmd}, nil
}

func (m *member) done() bool { return m.killed.Load() }
func (m *member) close()     {}

func (m *member) terminate() {
	_ = m.cmd.Process.Kill()
	m.killed.Store(true)
}

func (m *member) kill() []string { m.terminate(); return nil }

// stuck returns the processes left that refused SIGKILL: none here, where
// Stop does not read the tree's processes.
func (m *member) stuck() []string { return nil }

func (m *member) release() {}
