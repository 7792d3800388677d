//go:build unix && !linux

package qos

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// posixMember is a command the Group started. On macOS and other Unix systems
// Stop reaches its process group; what left that group is not held.
type posixMember struct {
	cmd   *exec.Cmd
	group bool // the command leads a process group of its own
	exit  exitWatch
}

func (g *Group) startMember(cmd *exec.Cmd, t Tier, m Mode) (member, error) {
	caller := cmd.SysProcAttr
	withGroup(cmd)
	group := ownGroup(cmd)
	err := start(cmd, t, m)
	cmd.SysProcAttr = caller
	if err != nil {
		return nil, err
	}
	return &posixMember{cmd: cmd, group: group, exit: watchExit(cmd.Process)}, nil
}

func (m *posixMember) pid() int { return m.cmd.Process.Pid }

func (m *posixMember) done() bool { return m.exit.exited() }
func (m *posixMember) close()     {}
func (m *posixMember) terminate() { signalCommand(m.cmd, m.group, syscall.SIGTERM) }

func (m *posixMember) kill() []string {
	signalCommand(m.cmd, m.group, syscall.SIGKILL)
	return nil // no process table to name them from
}

// exitWatch tells whether a started command has exited. Without a pidfd, a
// process counts as exited once cmd.Wait has reaped it: kill(2) with signal
// 0 also succeeds for a zombie.
type exitWatch struct{ p *os.Process }

func watchExit(p *os.Process) exitWatch { return exitWatch{p: p} }

func (w exitWatch) exited() bool {
	err := w.p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}

// signalCommand sends sig to the command's process group when it leads
// one, else to its process. The caller has just seen the process still
// running, so the group's id, its pid, is not yet free for reuse (a pid
// stays taken while a process group has it as id).
func signalCommand(cmd *exec.Cmd, group bool, sig syscall.Signal) {
	if group {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		return
	}
	_ = cmd.Process.Signal(sig)
}

// stuck returns the processes left that refused SIGKILL: none here, where
// Stop does not read the tree's processes.
func (m *posixMember) stuck() []string { return nil }

func (m *posixMember) release() {}

// groupSys is what a Group keeps here: nothing.
type groupSys struct{}
