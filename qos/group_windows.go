//go:build windows

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows each command of a Group runs in a job object of its own with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE ("JOBOBJECT_BASIC_LIMIT_INFORMATION",
// learn.microsoft.com): every process the command starts is in the job
// too (a child of a process in a job is in it; breakaway needs
// JOB_OBJECT_LIMIT_BREAKAWAY_OK, not given), and when the last handle to
// the job closes, as the app's does however the app ends, the system
// terminates them all. Stop terminates the job (TerminateJobObject). The
// command starts suspended (CREATE_SUSPENDED), is assigned to the job, and
// only then resumed, so that nothing it starts is outside. Nested jobs need
// Windows 8. Like the rest of qos on Windows, this compiles in CI but has
// not run on Windows.

// jobMember is a command the Group started, and its job.
type jobMember struct {
	cmd  *exec.Cmd
	exit exitWatch
	job  windows.Handle
}

func (g *Group) startMember(cmd *exec.Cmd, t Tier, m Mode) (member, error) {
	job, err := newKillOnCloseJob()
	if err != nil {
		return nil, err
	}
	caller := cmd.SysProcAttr
	attr := syscall.SysProcAttr{}
	if caller != nil {
		attr = *caller // a copy: the caller's may be shared
	}
	attr.CreationFlags |= windows.CREATE_SUSPENDED
	cmd.SysProcAttr = &attr
	err = start(cmd, t, m)
	cmd.SysProcAttr = caller
	if err != nil {
		_ = windows.CloseHandle(job)
		return nil, err
	}
	if err := joinAndResume(job, cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		cmd.Process, cmd.ProcessState = nil, nil
		_ = windows.CloseHandle(job)
		return nil, fmt.Errorf("qos: start %s: %w", cmd.Path, err)
	}
	return &jobMember{cmd: cmd, exit: watchExit(cmd.Process), job: job}, nil
}

// newKillOnCloseJob creates a job whose processes end when its last handle
// closes. The handle is not inheritable, so no child keeps it open.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("qos: CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("qos: SetInformationJobObject(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): %w", err)
	}
	return job, nil
}

// joinAndResume assigns the suspended process pid to job and resumes its
// threads (its one thread, found with CreateToolhelp32Snapshot: os/exec
// keeps no handle to it).
func joinAndResume(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("OpenProcess(%d): %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread(%d): %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("ResumeThread(%d): %w", te.ThreadID, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("Thread32Next: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

// done reports whether the command exited and its job holds no process.
func (m *jobMember) pid() int { return m.cmd.Process.Pid }

func (m *jobMember) done() bool { return m.exit.exited() && m.active() == 0 }

// active is the number of processes in the job (JobObjectBasicAccountingInformation).
func (m *jobMember) active() uint32 {
	var info jobAccounting
	err := windows.QueryInformationJobObject(m.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	if err != nil {
		return 0
	}
	return info.ActiveProcesses
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (winnt.h), which
// x/sys/windows does not have.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                       int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime   int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses uint32
	TotalTerminatedProcesses                             uint32
}

func (m *jobMember) close() {
	m.exit.close()
	_ = windows.CloseHandle(m.job)
}

// terminate ends the whole job at once: Windows has no SIGTERM.
func (m *jobMember) terminate() { _ = windows.TerminateJobObject(m.job, 1) }

func (m *jobMember) kill() []string { m.terminate(); return nil }

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

// stuck returns the processes left that refused SIGKILL: none here, where
// Stop does not read the tree's processes.
func (m *jobMember) stuck() []string { return nil }

func (m *jobMember) release() {}

// groupSys is what a Group keeps here: nothing.
type groupSys struct{}
