//go:build linux

package qos

import (
	"os"
	"os/exec"
	"syscall"
)

// dieWithApp sets SIGKILL as cmd's parent-death signal unless it has one,
// in a copy of SysProcAttr (the caller's may be shared).
func dieWithApp(cmd *exec.Cmd) {
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		if cmd.SysProcAttr.Pdeathsig != 0 {
			return
		}
		attr = *cmd.SysProcAttr
	}
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = &attr
}

// exitWatch tells whether a started command has exited, zombie or reaped,
// through the child type the pacer uses (a pidfd, or waitid(2) WNOWAIT).
type exitWatch struct{ c child }

func watchExit(p *os.Process) exitWatch { return exitWatch{c: openChild(p.Pid)} }

func (w exitWatch) exited() bool { return w.c.exited() }
func (w exitWatch) close()       { w.c.close() }
