//go:build linux

package qos

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forkAtOnce is an agent that forks at its first chance: eight subshells
// at once, each printing its own nice value and scheduling policy
// (proc_pid_stat(5) fields 19 and 41; policy 5 is SCHED_IDLE) as its first
// act, then the agent itself the same. A child's policy and nice are its
// parent's at the fork (sched(7)), so a child that reads anything but
// SCHED_IDLE was forked before its parent was moved there.
const forkAtOnce = `report() { read -r l </proc/$1/stat; set -- $l; echo "${19} ${41}"; }
i=0
while [ $i -lt 8 ]; do (report self) & i=$((i+1)); done
wait
report $$`

// TestBackgroundIdleFromFirstFork: with a busy loop on every core, an agent
// started in mode background that forks at once has every process of its
// tree at SCHED_IDLE and nice 19 from its first appearance: the agent's own
// first instruction already ran at SCHED_IDLE. Each way Start forks is
// covered: a traced child (a process group or session of its own), a child
// forked from a SCHED_IDLE thread (the app's process group), and one with
// Pdeathsig (the kept spawner thread).
func TestBackgroundIdleFromFirstFork(t *testing.T) {
	busyLoops(t)
	for _, tc := range []struct {
		name string
		attr *syscall.SysProcAttr
	}{
		{"own process group", &syscall.SysProcAttr{Setpgid: true}},
		{"own session", &syscall.SysProcAttr{Setsid: true}},
		{"the app's process group", nil},
		{"Pdeathsig, own process group", &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 2 {
				cmd := exec.Command("/bin/sh", "-c", forkAtOnce)
				cmd.SysProcAttr = tc.attr
				requireAllIdle(t, cmd, func(c *exec.Cmd) error { return Start(c, Agent, ModeBackground) }, round)
			}
		})
	}
}

// requireAllIdle starts cmd (a forkAtOnce agent) through start and checks
// every line it printed.
func requireAllIdle(t *testing.T, cmd *exec.Cmd, start func(*exec.Cmd) error, round int) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, start(cmd))
	var lines []string
	for s := bufio.NewScanner(out); s.Scan(); {
		lines = append(lines, s.Text())
	}
	require.NoError(t, cmd.Wait())
	require.Len(t, lines, 9, "the agent's 8 children and itself")
	for i, l := range lines {
		who := fmt.Sprintf("round %d, child %d", round, i)
		if i == 8 {
			who = fmt.Sprintf("round %d, the agent", round)
		}
		assert.Equal(t, "19 5", strings.TrimSpace(l), "%s: got nice and policy %q, want \"19 5\" (nice 19, SCHED_IDLE)", who, l)
	}
}
