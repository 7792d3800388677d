//go:build windows

package qos

import (
	"os"
	"os/exec"

	"golang.org/x/sys/windows"
)

// dieWithApp does nothing: Windows has no parent-death signal (a job object
// with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE would be its equivalent).
func dieWithApp(*exec.Cmd) {}

// ownGroup: Stop kills the process alone on Windows.
func ownGroup(*exec.Cmd) bool { return false }

// signal kills the process (TerminateProcess): Windows has no SIGTERM.
func (m *member) signal(bool) { _ = m.cmd.Process.Kill() }

// exitWatch holds a handle to the process, which keeps its id from being
// reused, and is signalled once the process has exited
// (WaitForSingleObject on learn.microsoft.com).
type exitWatch struct{ h windows.Handle }

func watchExit(p *os.Process) exitWatch {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(p.Pid))
	if err != nil {
		return exitWatch{}
	}
	return exitWatch{h: h}
}

func (w exitWatch) exited() bool {
	if w.h == 0 {
		return true // no handle: nothing to wait for
	}
	ev, err := windows.WaitForSingleObject(w.h, 0)
	return err != nil || ev == windows.WAIT_OBJECT_0
}

func (w exitWatch) close() {
	if w.h != 0 {
		_ = windows.CloseHandle(w.h)
	}
}
