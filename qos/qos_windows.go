//go:build windows

package qos

import (
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows support. It compiles in this repository's CI (GOOS=windows go vet)
// but is not exercised by it.
//
// A child gets its priority class from CreateProcess's creation flags, and
// passes BELOW_NORMAL_PRIORITY_CLASS and IDLE_PRIORITY_CLASS on to the
// processes it starts without flags of their own ("Process Creation Flags"
// and CreateProcessW, learn.microsoft.com: "If none of the priority class
// flags is specified, the priority class defaults to NORMAL_PRIORITY_CLASS
// unless the priority class of the creating process is IDLE_PRIORITY_CLASS
// or BELOW_NORMAL_PRIORITY_CLASS").

// From processthreadsapi.h / winbase.h (SetThreadPriority on
// learn.microsoft.com); x/sys/windows has neither these nor SetThreadPriority.
const (
	threadModeBackgroundBegin = 0x00010000 // THREAD_MODE_BACKGROUND_BEGIN
	threadModeBackgroundEnd   = 0x00020000 // THREAD_MODE_BACKGROUND_END
	threadPriorityBelowNormal = -1         // THREAD_PRIORITY_BELOW_NORMAL
	threadPriorityNormal      = 0          // THREAD_PRIORITY_NORMAL
)

var procSetThreadPriority = windows.NewLazySystemDLL("kernel32.dll").NewProc("SetThreadPriority")

// priorityClass is the Windows column of the policy table for a child; 0
// leaves the class alone.
func priorityClass(t Tier, m Mode) uint32 {
	switch {
	case m == ModeOff || t == Serving:
		return 0
	case t == Agent && m == ModeUtility:
		return windows.BELOW_NORMAL_PRIORITY_CLASS
	}
	return windows.IDLE_PRIORITY_CLASS
}

func (o Options) start(cmd *exec.Cmd, t Tier, m Mode) error {
	class := priorityClass(t, m)
	if class == 0 {
		return cmd.Start()
	}
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr // a copy: the caller's may be shared
	}
	attr.CreationFlags |= class
	cmd.SysProcAttr = &attr
	return cmd.Start()
}

func (o Options) do(t Tier, m Mode, fn func()) error {
	if m == ModeOff || t == Serving {
		fn()
		return nil
	}
	begin, end := int32(threadModeBackgroundBegin), int32(threadModeBackgroundEnd)
	if t == Agent && m == ModeUtility {
		begin, end = threadPriorityBelowNormal, threadPriorityNormal
	}
	lower := func() (func() error, error) {
		if err := setThreadPriority(begin); err != nil {
			return nil, err
		}
		return func() error { return setThreadPriority(end) }, nil
	}
	return runLowered(lower, func() error { fn(); return nil })
}

func setThreadPriority(p int32) error {
	r, _, err := procSetThreadPriority.Call(uintptr(windows.CurrentThread()), uintptr(p))
	if r == 0 {
		return fmt.Errorf("qos: SetThreadPriority(%#x): %w", p, err)
	}
	return nil
}

func (o Options) enterServing() error { return nil } // Serving is unchanged on Windows

func isMainThread() bool { return false } // threads are put back on Windows

var classNames = map[uint32]string{
	windows.IDLE_PRIORITY_CLASS:         "IDLE_PRIORITY_CLASS",
	windows.BELOW_NORMAL_PRIORITY_CLASS: "BELOW_NORMAL_PRIORITY_CLASS",
	windows.NORMAL_PRIORITY_CLASS:       "NORMAL_PRIORITY_CLASS",
	windows.ABOVE_NORMAL_PRIORITY_CLASS: "ABOVE_NORMAL_PRIORITY_CLASS",
	windows.HIGH_PRIORITY_CLASS:         "HIGH_PRIORITY_CLASS",
	windows.REALTIME_PRIORITY_CLASS:     "REALTIME_PRIORITY_CLASS",
}

func inspect(pid int) (Applied, error) {
	var a Applied
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return a, fmt.Errorf("qos: OpenProcess(%d): %w", pid, err)
	}
	defer windows.CloseHandle(h)
	c, err := windows.GetPriorityClass(h)
	if err != nil {
		return a, fmt.Errorf("qos: GetPriorityClass(%d): %w", pid, err)
	}
	a.Policy = classNames[c]
	return a, nil
}
