//go:build darwin

package qos

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// macOS support. It compiles in this repository's CI (GOOS=darwin go vet,
// staticcheck) and its Start argument list is tested on Linux
// (taskpolicy_args_test.go), but nothing here runs in that CI: no test here
// runs on macOS, so the calls into libSystem and their effects are untested.
//
// Children run under /usr/sbin/taskpolicy (taskpolicy(8): -c clamps the QoS
// class, -d sets the disk I/O policy with IOPOL_SCOPE_PROCESS, -b runs the
// program with PRIO_DARWIN_BG; "All children of the specified program also
// inherit these policies"). taskpolicy executes the program itself, in its
// own process (posix_spawn with POSIX_SPAWN_SETEXEC), so the pid Start
// reports is the program's, and nothing re-executes this process: there is
// no loop to guard against with a marker variable. A distinct argv[0] needs
// bash in between (see taskpolicyArgs). Threads are lowered through
// libSystem, without cgo, by the trampolines in qos_darwin.s.

// From the macOS SDK's sys/resource.h. x/sys/unix has the PRIO_DARWIN_*
// values too; they are repeated here so that every constant cites its header.
const (
	prioDarwinThread  = 3      // PRIO_DARWIN_THREAD
	prioDarwinProcess = 4      // PRIO_DARWIN_PROCESS
	prioDarwinBG      = 0x1000 // PRIO_DARWIN_BG
	iopolTypeDisk     = 0      // IOPOL_TYPE_DISK
	iopolScopeProcess = 0      // IOPOL_SCOPE_PROCESS
	iopolScopeThread  = 1      // IOPOL_SCOPE_THREAD
	iopolUtility      = 4      // IOPOL_UTILITY
)

// From the macOS SDK's sys/qos.h (qos_class_t).
const (
	qosClassUtility     = 0x11 // QOS_CLASS_UTILITY
	qosClassBackground  = 0x09 // QOS_CLASS_BACKGROUND
	qosClassUnspecified = 0x00 // QOS_CLASS_UNSPECIFIED
)

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

func start(cmd *exec.Cmd, t Tier, m Mode) error {
	if m == ModeOff || cmd.Err != nil || cmd.Path == "" || cmd.Path == taskpolicy {
		return cmd.Start() // cmd.Start reports cmd.Err and an empty Path
	}
	shell := argv0Shell
	if unix.Access(shell, unix.X_OK) != nil {
		shell = "" // argv[0] becomes the path rather than no agent at all
	}
	cmd.Args = taskpolicyArgs(taskpolicyFlags(t, m), cmd.Path, cmd.Args, cmd.Environ(), shell)
	cmd.Path = taskpolicy
	return cmd.Start()
}

func do(t Tier, m Mode, fn func()) error {
	if m == ModeOff {
		fn()
		return nil
	}
	return runLowered(func() (func() error, error) { return lowerThread(t, m) },
		func() error { fn(); return nil })
}

// lowerThread lowers the calling thread and returns what puts back exactly
// the state it read before, or a nil restore (the thread is then retired)
// where xnu offers no way back.
//
// xnu lets a thread hold either a QoS class or the legacy PRIO_DARWIN_BG and
// non-passive I/O policies: setting either legacy one strips the class
// (bsd/kern/kern_resource.c, do_background_thread and iopolicysys_disk: "Not
// allowed to combine QoS and DARWIN_BG, doing so strips the QoS"), and a
// thread that is not a workqueue thread cannot get a class back
// (bsd/pthread/pthread_workqueue.c, bsdthread_set_self: "Threads opted out of
// QoS can't change QoS", EPERM). Go's threads have one (libpthread's default
// attributes give QOS_CLASS_DEFAULT, src/pthread.c). So the Agent and
// Background tiers lower a thread by its class, which restores exactly:
// QOS_CLASS_UTILITY (I/O throttle tier 1, thread_qos_policy_params in
// osfmk/kern/thread_policy.c) and QOS_CLASS_BACKGROUND, which xnu applies as
// DARWIN_BG (thread_policy_update_internal_spinlocked: "wants_darwinbg" for
// THREAD_QOS_BACKGROUND). Only a thread already without a class gets the
// legacy policies, which then restore exactly too. Serving's I/O policy has
// no class to express it (a class would lower the CPU too): it strips the
// class, and the thread is retired.
func lowerThread(t Tier, m Mode) (restore func() error, err error) {
	class, relpri := qosClassSelf()
	switch {
	case t == Serving:
		return lowerIO(class)
	case t == Agent && m == ModeUtility:
		if class == qosClassUnspecified {
			return lowerIO(class)
		}
		return lowerClass(qosClassUtility, class, relpri)
	case class == qosClassUnspecified:
		return lowerBG()
	}
	return lowerClass(qosClassBackground, class, relpri)
}

// lowerClass sets the calling thread's QoS class to class; restore sets the
// class and relative priority it had, prev and relpri.
func lowerClass(class, prev, relpri int) (func() error, error) {
	if err := setQOSClass(class, 0); err != nil {
		return nil, err
	}
	return func() error { return setQOSClass(prev, relpri) }, nil
}

// lowerIO sets the calling thread's disk I/O policy to IOPOL_UTILITY. The
// restore puts back the policy getiopolicy_np(3) read before; it is nil if
// the thread had a QoS class, which the policy strips for good.
func lowerIO(class int) (func() error, error) {
	prev, err := getIOPolicy(iopolScopeThread)
	if err != nil {
		return nil, err
	}
	if err := setIOPolicy(iopolScopeThread, iopolUtility); err != nil {
		return nil, err
	}
	if class != qosClassUnspecified {
		return nil, nil
	}
	return func() error { return setIOPolicy(iopolScopeThread, prev) }, nil
}

// lowerBG puts the calling thread, which has no QoS class, in
// PRIO_DARWIN_BG (setpriority(2), PRIO_DARWIN_THREAD with who 0 is the
// calling thread). getpriority(PRIO_DARWIN_THREAD, 0) reads 1 if the thread
// is in it already (xnu's getpriority returns the thread's DARWIN_BG policy),
// and restore puts that back.
func lowerBG() (func() error, error) {
	was, err := unix.Getpriority(prioDarwinThread, 0)
	if err != nil {
		return nil, fmt.Errorf("qos: getpriority(PRIO_DARWIN_THREAD): %w", err)
	}
	prev := 0
	if was != 0 {
		prev = prioDarwinBG
	}
	if err := unix.Setpriority(prioDarwinThread, 0, prioDarwinBG); err != nil {
		return nil, fmt.Errorf("qos: setpriority(PRIO_DARWIN_THREAD, PRIO_DARWIN_BG): %w", err)
	}
	return func() error { return unix.Setpriority(prioDarwinThread, 0, prev) }, nil
}

func enterServing() error {
	return setIOPolicy(iopolScopeProcess, iopolUtility)
}

// mainThread is the thread package initialisation runs on: the runtime's
// main thread m0, to which runtime.main locks the main goroutine while
// packages initialise ("Lock the main goroutine onto this, the main OS
// thread, during initialization", runtime/proc.go). A retired m0 is parked,
// not ended (see lowered), so isMainThread must recognise it.
var mainThread = pthreadSelf()

func isMainThread() bool { return pthreadSelf() == mainThread }

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

// The libSystem calls below are made the way x/sys/unix calls libc on
// macOS: a trampoline (qos_darwin.s) jumps to the dynamically imported
// symbol, and the runtime's syscall.syscall switches to the system stack.
// Functions that return a C int leave the upper 32 bits of r undefined, so
// only int32(r) is read (the runtime's own check is int32(r) == -1,
// syscall.errno in syscall/syscall_darwin.go).

// setIOPolicy is setiopolicy_np(3) for IOPOL_TYPE_DISK. libSystem's wrapper
// reports success when xnu stripped the thread's QoS class to apply the
// policy (xnu libsyscall/wrappers/getiopolicy_np.c).
func setIOPolicy(scope, policy int) error {
	r, _, errno := syscall_syscall(libc_setiopolicy_np_trampoline_addr, iopolTypeDisk, uintptr(scope), uintptr(policy))
	if int32(r) == -1 {
		return fmt.Errorf("qos: setiopolicy_np(IOPOL_TYPE_DISK, %d, %d): %w", scope, policy, errno)
	}
	return nil
}

// getIOPolicy is getiopolicy_np(3) for IOPOL_TYPE_DISK, which returns -1 on
// error. xnu keeps a throttle tier and reads it back as a policy
// (proc_tier_to_iopol and proc_iopol_to_tier, osfmk/kern/task_policy.c):
// tier 0 reads as IOPOL_DEFAULT, whether never set or set to IOPOL_IMPORTANT,
// and setting IOPOL_DEFAULT stores tier 0 again, so what is read restores
// the same tier.
func getIOPolicy(scope int) (int, error) {
	r, _, errno := syscall_syscall(libc_getiopolicy_np_trampoline_addr, iopolTypeDisk, uintptr(scope), 0)
	if p := int32(r); p != -1 {
		return int(p), nil
	}
	return 0, fmt.Errorf("qos: getiopolicy_np(IOPOL_TYPE_DISK, %d): %w", scope, errno)
}

// setQOSClass is pthread_set_qos_class_self_np(3), which returns an errno
// value rather than -1.
func setQOSClass(class, relpri int) error {
	r, _, _ := syscall_syscall(libc_pthread_set_qos_class_self_np_trampoline_addr, uintptr(class), uintptr(relpri), 0)
	if e := int32(r); e != 0 {
		return fmt.Errorf("qos: pthread_set_qos_class_self_np(%#x, %d): %w", class, relpri, syscall.Errno(e))
	}
	return nil
}

// qosClassSelf returns the calling thread's QoS class and relative priority,
// from pthread_get_qos_class_np(3) on pthread_self(3). It cannot fail:
// libpthread reads them from the thread's own storage and returns 0
// (src/qos.c), storage its wrappers clear when xnu strips the class.
func qosClassSelf() (class, relpri int) {
	var c uint32 // qos_class_t, an unsigned int (sys/qos.h)
	var p int32  // int
	syscall_syscall(libc_pthread_get_qos_class_np_trampoline_addr, pthreadSelf(),
		uintptr(unsafe.Pointer(&c)), uintptr(unsafe.Pointer(&p)))
	return int(c), int(p)
}

// pthreadSelf is pthread_self(3): the calling thread's pthread_t, a pointer
// that stays the thread's own while it lives.
func pthreadSelf() uintptr {
	r, _, _ := syscall_syscall(libc_pthread_self_trampoline_addr, 0, 0, 0)
	return r
}

//go:linkname syscall_syscall syscall.syscall
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

var (
	libc_setiopolicy_np_trampoline_addr                uintptr
	libc_getiopolicy_np_trampoline_addr                uintptr
	libc_pthread_set_qos_class_self_np_trampoline_addr uintptr
	libc_pthread_get_qos_class_np_trampoline_addr      uintptr
	libc_pthread_self_trampoline_addr                  uintptr
)

//go:cgo_import_dynamic libc_setiopolicy_np setiopolicy_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_getiopolicy_np getiopolicy_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_pthread_set_qos_class_self_np pthread_set_qos_class_self_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_pthread_get_qos_class_np pthread_get_qos_class_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_pthread_self pthread_self "/usr/lib/libSystem.B.dylib"
