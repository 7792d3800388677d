package main

import (
	"os/exec"
	"syscall"

	"github.com/offmain/offmain/qos"
)

// sysProcAttr gives every worker its own process group, so the bench can
// kill it and anything it starts with one kill(-pgid). The setsid-fix arm
// asks for a new session, which is also a new process group whose id is the
// worker's pid (setsid(2)). The setsid arm asks for neither: its worker calls
// setsid itself (setsid(2) fails with EPERM in a process-group leader).
func sysProcAttr(a arm) *syscall.SysProcAttr {
	switch a.kind {
	case armSetsidFix:
		return &syscall.SysProcAttr{Setsid: true}
	case armSetsid:
		return nil
	}
	return &syscall.SysProcAttr{Setpgid: true}
}

// startAt starts cmd at arm a's tier. The arms that compare with the
// module go through qos.Start; default starts at the bench's own priority;
// nice:N and idleclass lower the worker from inside (lowerSelf).
//
// setsid and setsid-fix both run the agent tier through qos.Start, each
// worker in a session of its own. qos.Start writes the tier's nice to the new
// session's /proc/<pid>/autogroup when SysProcAttr asks for the session
// (setsid-fix). qos has no switch to skip that write, so the setsid arm
// starts the worker in the bench's session and the worker calls setsid(2)
// itself first thing, as a shell that makes its own session does: qos does
// not see that session, and its autogroup keeps nice 0. The table's
// "Applied" line shows both autogroups as read back.
func startAt(cmd *exec.Cmd, a arm) error {
	switch a.kind {
	case armAgent, armSetsidFix:
		return qos.Start(cmd, qos.Agent, qos.ModeUtility)
	case armSetsid:
		cmd.Env = append(cmd.Env, setsidEnv+"=1")
		return qos.Start(cmd, qos.Agent, qos.ModeUtility)
	case armBackground:
		return qos.Start(cmd, qos.Agent, qos.ModeBackground)
	case armNice:
		cmd.Env = append(cmd.Env, lowerEnv+"="+lowerSpec{nice: a.nice}.String())
	case armIdleClass:
		cmd.Env = append(cmd.Env, lowerEnv+"="+lowerSpec{idle: true}.String())
	}
	return cmd.Start()
}
