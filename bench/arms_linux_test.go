package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/offmain/offmain/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestArmsApplyTheirTier starts one spinner per arm and reads back what every
// thread of it runs at, and its autogroup: the setsid arm must keep nice 0
// on its own autogroup (no fix), setsid-fix must carry the tier's nice.
func TestArmsApplyTheirTier(t *testing.T) {
	own, err := qos.Inspect(os.Getpid())
	require.NoError(t, err)
	tests := []struct {
		arm           arm
		nice          int
		policy        string // /proc/<pid>/task/<tid>/stat field 41: 0 SCHED_OTHER, 5 SCHED_IDLE (sched(7))
		newAutogroup  bool
		autogroupNice int
	}{
		{arm{name: "default", kind: armDefault}, 0, "0", false, 0},
		{arm{name: "agent", kind: armAgent}, 15, "0", false, 0},
		{arm{name: "background", kind: armBackground}, 19, "5", false, 0},
		{arm{name: "setsid", kind: armSetsid}, 15, "0", true, 0},
		{arm{name: "setsid-fix", kind: armSetsidFix}, 15, "0", true, 15},
		{arm{name: "nice:7", kind: armNice, nice: 7}, 7, "0", false, 0},
		{arm{name: "idleclass", kind: armIdleClass}, 0, "5", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.arm.name, func(t *testing.T) {
			p := &pool{exe: testExe(t), marker: thisRun() + "arms"}
			t.Cleanup(func() { assert.NoError(t, p.stopAll(), "stopping the worker") })
			require.NoError(t, p.start(t.Context(), tt.arm, "spin", "-"))
			pid := p.workers[0].cmd.Process.Pid
			for tid, f := range threadStats(t, pid) {
				assert.Equal(t, strconv.Itoa(tt.nice), f[16], "thread %s: nice", tid)
				assert.Equal(t, tt.policy, f[38], "thread %s: policy", tid)
			}
			ap, err := qos.Inspect(pid)
			require.NoError(t, err)
			assert.Equal(t, tt.newAutogroup, ap.Autogroup != own.Autogroup, "got autogroup %s (the test's: %s)", ap.Autogroup, own.Autogroup)
			assert.Equal(t, tt.autogroupNice, ap.AutogroupNice, "autogroup nice")
		})
	}
}

// threadStats returns the fields after "(comm) " of every thread's stat
// (proc(5)): index 0 is field 3, so nice (field 19) is 16 and policy (41) is 38.
func threadStats(t *testing.T, pid int) map[string][]string {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		require.NoError(t, err)
		_, rest, ok := strings.Cut(string(b), ") ")
		require.True(t, ok, "stat of thread %s: %q", e.Name(), b)
		out[e.Name()] = strings.Fields(rest)
	}
	require.NotEmpty(t, out, "threads of %d", pid)
	return out
}

// TestCheckAppliedFailsOffTier starts a default-arm spinner, checks that it
// passes, then lowers one of its threads behind the bench's back: the check
// must fail the run, naming the thread.
func TestCheckAppliedFailsOffTier(t *testing.T) {
	p := &pool{exe: testExe(t), marker: thisRun() + "offtier"}
	t.Cleanup(func() { assert.NoError(t, p.stopAll(), "stopping the worker") })
	a := arm{name: "default", kind: armDefault}
	require.NoError(t, p.start(t.Context(), a, "spin", "-"))
	b := &bench{pool: p, applied: map[string]*expected{}}
	require.NoError(t, b.readOwnTier())
	require.NoError(t, b.checkApplied(a), "a worker at the bench's own tier")
	pid := p.workers[0].cmd.Process.Pid
	var last int
	for tid := range threadStats(t, pid) {
		last, _ = strconv.Atoi(tid)
	}
	require.NoError(t, unix.Setpriority(unix.PRIO_PROCESS, last, 3), "renice thread %d", last)
	err := b.checkApplied(a)
	require.Error(t, err, "got no error for a thread at nice 3, want off-tier")
	assert.Contains(t, err.Error(), "thread "+strconv.Itoa(last)+" is off-tier", "error message")
}

// TestCheckAppliedReadsTheTree: a worker's child is part of what is
// checked. A "worker" (a shell here) at the bench's tier that started a
// child at nice 3 fails the check, which names the child.
func TestCheckAppliedReadsTheTree(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "nice -n 3 sleep 100 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	child := strings.TrimSpace(line)
	tree, err := processTree(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Contains(t, tree, cmd.Process.Pid, "the tree holds the worker")
	b := &bench{pool: &pool{workers: []*worker{{mode: "spin", cmd: cmd}}}, applied: map[string]*expected{}}
	require.NoError(t, b.readOwnTier())
	err = b.checkApplied(arm{name: "default", kind: armDefault})
	require.Error(t, err, "got no error for a child at nice 3, want off-tier")
	assert.Contains(t, err.Error(), "process "+child+" thread "+child+" is off-tier", "error message")
}
