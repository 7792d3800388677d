//go:build !unix && !windows

package qos

import (
	"os"
	"os/exec"
	"sync/atomic"
)

func dieWithApp(*exec.Cmd) {}

func ownGroup(*exec.Cmd) bool { return false }

// signal kills the process: there is no SIGTERM here.
func (m *member) signal(bool) {
	_ = m.cmd.Process.Kill()
	m.exit.killed.Store(true)
}

// exitWatch cannot see an exit here: a process counts as exited once it
// was killed.
type exitWatch struct{ killed *atomic.Bool }

func watchExit(*os.Process) exitWatch { return exitWatch{killed: new(atomic.Bool)} }

func (w exitWatch) exited() bool { return w.killed.Load() }
func (exitWatch) close()         {}
