//go:build windows

package qos

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// Windows support. Its choice of creation flags is tested on Linux too
// (creationflags_test.go); CI runs the Windows tests under Wine 8, which
// checks the flags Start passes and the thread priorities Do sets and
// restores, but not their effect (see "macOS, Windows and others" in the
// package doc).
//
// A child gets its priority class from CreateProcess's creation flags, and
// passes BELOW_NORMAL_PRIORITY_CLASS and IDLE_PRIORITY_CLASS on to the
// processes it starts without flags of their own ("Process Creation Flags"
// and CreateProcessW, learn.microsoft.com: "If none of the priority class
// flags is specified, the priority class defaults to NORMAL_PRIORITY_CLASS
// unless the priority class of the creating process is IDLE_PRIORITY_CLASS
// or BELOW_NORMAL_PRIORITY_CLASS").

// From processthreadsapi.h / winbase.h (SetThreadPriority and
// GetThreadPriority on learn.microsoft.com); x/sys/windows has neither these
// nor the two functions.
const (
	threadModeBackgroundBegin = 0x00010000 // THREAD_MODE_BACKGROUND_BEGIN
	threadModeBackgroundEnd   = 0x00020000 // THREAD_MODE_BACKGROUND_END
	threadPriorityBelowNormal = -1         // THREAD_PRIORITY_BELOW_NORMAL
	threadPriorityErrorReturn = 0x7fffffff // THREAD_PRIORITY_ERROR_RETURN (MAXLONG)
)

var (
	kernel32              = windows.NewLazySystemDLL("kernel32.dll")
	procSetThreadPriority = kernel32.NewProc("SetThreadPriority")
	procGetThreadPriority = kernel32.NewProc("GetThreadPriority")
)

// priorityClass is the Windows column of the policy table for a child; 0
// leaves the class alone.
func priorityClass(t Tier, m Mode) uint32 {
	switch {
	case m == ModeOff || t == Serving:
		return 0
	case t == Agent && m == ModeUtility:
		return belowNormalPriorityClass
	}
	return idlePriorityClass
}

// start sets the tier's priority class in a copy of cmd.SysProcAttr. A class
// the caller set in CreationFlags is replaced, not joined, and only by a
// lower one: an agent the caller already lowered further stays there (see
// withPriorityClass).
func start(cmd *exec.Cmd, t Tier, m Mode) error {
	class := priorityClass(t, m)
	if class == 0 {
		return cmd.Start()
	}
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr // a copy: the caller's may be shared
	}
	attr.CreationFlags = withPriorityClass(attr.CreationFlags, class)
	cmd.SysProcAttr = &attr
	return cmd.Start()
}

func do(t Tier, m Mode, fn func()) error {
	if m == ModeOff || t == Serving {
		fn()
		return nil
	}
	lower := lowerBackground
	if t == Agent && m == ModeUtility {
		lower = lowerBelowNormal
	}
	return runLowered(lower, func() error { fn(); return nil })
}

// lowerBelowNormal sets the calling thread's priority to
// THREAD_PRIORITY_BELOW_NORMAL; restore sets the priority GetThreadPriority
// read before.
func lowerBelowNormal() (func() error, error) {
	prev, err := threadPriority()
	if err != nil {
		return nil, err
	}
	if err := setThreadPriority(threadPriorityBelowNormal); err != nil {
		return nil, err
	}
	return func() error { return setThreadPriority(prev) }, nil
}

// lowerBackground puts the calling thread in background processing mode.
// SetThreadPriority: THREAD_MODE_BACKGROUND_END "restores the resource
// scheduling priorities of the thread as they were before the thread entered
// background processing mode", and BEGIN "fails if the thread is already in
// background processing mode": then the thread is left in it, as it was.
// After END, restore also checks the thread priority against the one read
// before and sets it again if it differs, so a thread goes back to the pool
// only as it came.
func lowerBackground() (func() error, error) {
	prev, err := threadPriority()
	if err != nil {
		return nil, err
	}
	err = setThreadPriority(threadModeBackgroundBegin)
	if errors.Is(err, windows.ERROR_THREAD_MODE_ALREADY_BACKGROUND) {
		return func() error { return nil }, nil
	}
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := setThreadPriority(threadModeBackgroundEnd); err != nil {
			return err
		}
		if now, err := threadPriority(); err != nil || now == prev {
			return err
		}
		return setThreadPriority(prev)
	}, nil
}

func setThreadPriority(p int32) error {
	r, _, err := procSetThreadPriority.Call(uintptr(windows.CurrentThread()), uintptr(p))
	if r == 0 {
		return fmt.Errorf("qos: SetThreadPriority(%#x): %w", p, err)
	}
	return nil
}

// threadPriority is GetThreadPriority for the calling thread.
func threadPriority() (int32, error) {
	r, _, err := procGetThreadPriority.Call(uintptr(windows.CurrentThread()))
	if p := int32(r); p != threadPriorityErrorReturn {
		return p, nil
	}
	return 0, fmt.Errorf("qos: GetThreadPriority: %w", err)
}

func enterServing() error { return nil } // Serving is unchanged on Windows

// mainThread is the thread package initialisation runs on: the runtime's
// main thread m0, to which runtime.main locks the main goroutine while
// packages initialise ("Lock the main goroutine onto this, the main OS
// thread, during initialization", runtime/proc.go). A retired m0 is parked,
// not ended (see lowered), so isMainThread must recognise it.
var mainThread = windows.GetCurrentThreadId()

func isMainThread() bool { return windows.GetCurrentThreadId() == mainThread }

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
