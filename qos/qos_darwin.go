//go:build darwin

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	_ "unsafe" // for go:linkname

	"golang.org/x/sys/unix"
)

// macOS support. It compiles in this repository's CI (GOOS=darwin go vet) but
// is not exercised by it: no test here runs on macOS.
//
// Children run under /usr/sbin/taskpolicy (taskpolicy(8): -c clamps the QoS
// class, -d sets the disk I/O policy with IOPOL_SCOPE_PROCESS, -b runs the
// program with PRIO_DARWIN_BG; "All children of the specified program also
// inherit these policies"). taskpolicy executes the program itself, in its
// own process (posix_spawn with POSIX_SPAWN_SETEXEC), so the pid Start
// reports is the program's, and nothing re-executes this process: there is
// no loop to guard against with a marker variable. Threads are lowered
// through libSystem, without cgo, by the trampolines in qos_darwin.s.

// From the macOS SDK's sys/resource.h. x/sys/unix has the PRIO_DARWIN_*
// values too; they are repeated here so that every constant cites its header.
const (
	prioDarwinThread  = 3      // PRIO_DARWIN_THREAD
	prioDarwinProcess = 4      // PRIO_DARWIN_PROCESS
	prioDarwinBG      = 0x1000 // PRIO_DARWIN_BG
	iopolTypeDisk     = 0      // IOPOL_TYPE_DISK
	iopolScopeProcess = 0      // IOPOL_SCOPE_PROCESS
	iopolScopeThread  = 1      // IOPOL_SCOPE_THREAD
	iopolDefault      = 0      // IOPOL_DEFAULT
	iopolUtility      = 4      // IOPOL_UTILITY
)

// From the macOS SDK's sys/qos.h (qos_class_t).
const (
	qosClassUtility = 0x11 // QOS_CLASS_UTILITY
	qosClassDefault = 0x15 // QOS_CLASS_DEFAULT
)

const taskpolicy = "/usr/sbin/taskpolicy"

// taskpolicyFlags is the macOS column of the policy table for a child.
func taskpolicyFlags(t Tier, m Mode) []string {
	switch {
	case t == Serving:
		return []string{"-d", "utility"}
	case t == Agent && m == ModeUtility:
		return []string{"-c", "utility", "-d", "utility"}
	}
	return []string{"-b"}
}

func (o Options) start(cmd *exec.Cmd, t Tier, m Mode) error {
	if m == ModeOff || cmd.Err != nil || cmd.Path == taskpolicy {
		return cmd.Start() // cmd.Start reports cmd.Err
	}
	args := append([]string{taskpolicy}, taskpolicyFlags(t, m)...)
	args = append(args, cmd.Path)
	if len(cmd.Args) > 1 {
		args = append(args, cmd.Args[1:]...)
	}
	cmd.Path, cmd.Args = taskpolicy, args
	return cmd.Start()
}

func (o Options) do(t Tier, m Mode, fn func()) error {
	if m == ModeOff {
		fn()
		return nil
	}
	return runLowered(func() (func() error, error) { return lowerThread(t, m) },
		func() error { fn(); return nil })
}

// lowerThread lowers the calling thread: PRIO_DARWIN_BG for the Background
// tier and mode background (setpriority(2), PRIO_DARWIN_THREAD with who 0 is
// the calling thread); the utility QoS class and IOPOL_UTILITY otherwise
// (Serving keeps its QoS class).
func lowerThread(t Tier, m Mode) (restore func() error, err error) {
	if t == Background || m == ModeBackground {
		if err := unix.Setpriority(prioDarwinThread, 0, prioDarwinBG); err != nil {
			return nil, fmt.Errorf("qos: setpriority(PRIO_DARWIN_THREAD, PRIO_DARWIN_BG): %w", err)
		}
		return func() error { return unix.Setpriority(prioDarwinThread, 0, 0) }, nil
	}
	if err := setIOPolicy(iopolScopeThread, iopolUtility); err != nil {
		return nil, err
	}
	if t == Serving {
		return func() error { return setIOPolicy(iopolScopeThread, iopolDefault) }, nil
	}
	if err := setQOSClass(qosClassUtility); err != nil {
		return nil, err
	}
	return func() error {
		return errors.Join(setIOPolicy(iopolScopeThread, iopolDefault), setQOSClass(qosClassDefault))
	}, nil
}

func (o Options) enterServing() error {
	return setIOPolicy(iopolScopeProcess, iopolUtility)
}

func isMainThread() bool { return false } // threads are put back on macOS

func inspect(pid int) (Applied, error) {
	var a Applied
	p, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
	if err != nil {
		return a, fmt.Errorf("qos: getpriority(%d): %w", pid, err)
	}
	a.Nice = p
	// getpriority(PRIO_DARWIN_PROCESS) answers only for the calling process:
	// xnu's get_background_proc (bsd/kern/kern_resource.c) checks the
	// caller's right to ask about pid but then reads the policy of
	// current_task(), so for another process it would report the caller's
	// state. Policy stays "" (unknown) for other processes.
	if pid != os.Getpid() {
		return a, nil
	}
	a.Policy = "default"
	if bg, err := unix.Getpriority(prioDarwinProcess, 0); err == nil && bg != 0 {
		a.Policy = "PRIO_DARWIN_BG"
	}
	return a, nil
}

// setiopolicy_np(3) and pthread_set_qos_class_self_np(3) from libSystem,
// called the way x/sys/unix calls libc on macOS: a trampoline (qos_darwin.s)
// jumps to the dynamically imported symbol, and the runtime's syscall.syscall
// switches to the system stack.
func setIOPolicy(scope, policy int) error {
	r, _, errno := syscall_syscall(libc_setiopolicy_np_trampoline_addr, iopolTypeDisk, uintptr(scope), uintptr(policy))
	if int32(r) == -1 {
		return fmt.Errorf("qos: setiopolicy_np(IOPOL_TYPE_DISK, %d, %d): %w", scope, policy, errno)
	}
	return nil
}

func setQOSClass(class int) error {
	r, _, _ := syscall_syscall(libc_pthread_set_qos_class_self_np_trampoline_addr, uintptr(class), 0, 0)
	// It returns an errno value, not -1, as a C int: the upper 32 bits of r
	// are undefined (the runtime's own check is int32(r) == -1, syscall.errno
	// in syscall/syscall_darwin.go).
	if e := int32(r); e != 0 {
		return fmt.Errorf("qos: pthread_set_qos_class_self_np(%#x): %w", class, syscall.Errno(e))
	}
	return nil
}

//go:linkname syscall_syscall syscall.syscall
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

var (
	libc_setiopolicy_np_trampoline_addr                uintptr
	libc_pthread_set_qos_class_self_np_trampoline_addr uintptr
)

//go:cgo_import_dynamic libc_setiopolicy_np setiopolicy_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_pthread_set_qos_class_self_np pthread_set_qos_class_self_np "/usr/lib/libSystem.B.dylib"
