//go:build unix && !linux

package qos

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// dieWithApp does nothing: only Linux has a parent-death signal
// (prctl(2) PR_SET_PDEATHSIG).
func dieWithApp(*exec.Cmd) {}

// exitWatch tells whether a started command has exited. Without a pidfd, a
// process counts as exited once cmd.Wait has reaped it: kill(2) with signal
// 0 also succeeds for a zombie.
type exitWatch struct{ p *os.Process }

func watchExit(p *os.Process) exitWatch { return exitWatch{p: p} }

func (w exitWatch) exited() bool {
	err := w.p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}

func (w exitWatch) close() {}
