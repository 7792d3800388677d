//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
)

// testCgroup makes a cgroup for the test under the cgroup v2 hierarchy,
// mounting one in a temporary directory if none is mounted, and returns the
// hierarchy's mount point, the cgroup's directory and whether the cgroup can
// use the cpu controller. With cpu set it is given the controller the way a
// session manager delegates one (systemd's Delegate=: the parent enables it
// in its cgroup.subtree_control); without, it sits under a parent that
// enables nothing, so it never has it.
func testCgroup(t *testing.T, cpu bool) (root, dir string, hasCPU bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup outside a delegated subtree needs root; CI's root pass and its VM run this")
	}
	root = mountinfo.Cgroup2()
	if root == "" {
		root = t.TempDir()
		err := unix.Mount("cgroup2", root, "cgroup2", 0, "")
		if errors.Is(err, unix.EPERM) {
			t.Skipf("mounting cgroup2 needs CAP_SYS_ADMIN: %v", err)
		}
		require.NoError(t, err, "mount cgroup2 on %s", root)
		t.Cleanup(func() { assert.NoError(t, unix.Unmount(root, 0)) })
	}
	if cpu {
		enableCPU(t, root) // first, so that its cleanup runs after the cgroup is gone
	}
	dir = mkCgroup(t, filepath.Join(root, fmt.Sprintf("offmain-qos-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))))
	if !cpu {
		dir = mkCgroup(t, filepath.Join(dir, "no-cpu"))
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	require.NoError(t, err)
	return root, dir, slices.Contains(strings.Fields(string(b)), "cpu")
}

// mkCgroup makes cgroup dir and removes it, and the leaves Start made in
// it, when the test ends.
func mkCgroup(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		leaves, _ := filepath.Glob(filepath.Join(dir, "offmain-*", "cgroup.procs"))
		for _, l := range leaves {
			assert.NoError(t, os.Remove(filepath.Dir(l)))
		}
		assert.NoError(t, os.Remove(dir))
	})
	return dir
}

// enableCPU enables the cpu controller for the children of cgroup dir if
// dir offers it, and disables it again after the test if it was off.
func enableCPU(t *testing.T, dir string) {
	t.Helper()
	ctl := filepath.Join(dir, "cgroup.subtree_control")
	b, err := os.ReadFile(ctl)
	require.NoError(t, err)
	have, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if slices.Contains(strings.Fields(string(b)), "cpu") || !slices.Contains(strings.Fields(string(have)), "cpu") {
		return
	}
	require.NoError(t, writeFile(ctl, "+cpu"), "enable cpu in %s", ctl)
	t.Cleanup(func() { assert.NoError(t, writeFile(ctl, "-cpu"), "disable cpu in %s", ctl) })
}

// startedIn starts a waiting shell through g, without the helpers (as in
// an app without Main: the command itself is in the lever's leaf), and
// returns the cgroup v2 path it runs in, from /proc/<pid>/cgroup (line
// "0::<path>").
func startedIn(t *testing.T, g *Group, cmd *exec.Cmd, m Mode) string {
	t.Helper()
	unhooked(t)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(cmd, Agent, m))
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return p
		}
	}
	t.Fatalf("no cgroup v2 line in %q", b)
	return ""
}

func TestCgroupLever(t *testing.T) {
	root, dir, hasCPU := testCgroup(t, true)
	if !hasCPU {
		have, _ := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
		t.Skipf("the cgroup v2 hierarchy at %s offers no cpu controller (cgroup.controllers: %q)%s",
			root, strings.TrimSpace(string(have)), cpuV1Note())
	}
	rel := strings.TrimPrefix(dir, root)
	g := &Group{Cgroup: dir, OnError: func(error) {}}
	for _, tc := range []struct {
		mode       Mode
		leaf, knob string
		want       string
	}{
		{ModeUtility, fmt.Sprintf("offmain-nice%d", utilityNice), "cpu.weight.nice", strconv.Itoa(utilityNice)},
		{ModeBackground, "offmain-idle", "cpu.idle", "1"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			got := startedIn(t, g, exec.Command("/bin/sh", "-c", "read stop"), tc.mode)
			assert.Equal(t, rel+"/"+tc.leaf, got, "child's cgroup: got %s, want %s", got, rel+"/"+tc.leaf)
			b, err := os.ReadFile(filepath.Join(dir, tc.leaf, tc.knob))
			require.NoError(t, err)
			assert.Equal(t, tc.want, strings.TrimSpace(string(b)), "%s: got %s, want %s", tc.knob, b, tc.want)
		})
	}
}

// TestCgroupSkipsAutogroup: a Setsid child started into a cgroup with the
// cpu controller competes by that cgroup's weight, its autogroup unused
// (kernel/sched/autogroup.c, task_wants_autogroup), so Start spends no
// autogroup write (each costs every user's 100 ms window) on it.
func TestCgroupSkipsAutogroup(t *testing.T) {
	root, dir, hasCPU := testCgroup(t, true)
	if !hasCPU || !autogroupOn() {
		t.Skipf("needs the cgroup v2 cpu controller at %s and autogroup on%s", root, cpuV1Note())
	}
	cmd := exec.Command("/bin/cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	unhooked(t)
	g := Group{Cgroup: dir, OnError: func(error) {}}
	require.NoError(t, g.Start(cmd, Agent, ModeUtility))
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	waitFollowUps(t)
	assert.False(t, rootTaskGroup(cmd.Process.Pid), "a child in a cpu cgroup is not in the root task group")
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.NotEqual(t, rootAutogroup, a.Autogroup, "a Setsid child has an autogroup of its own")
	assert.Equal(t, 0, a.AutogroupNice, "autogroup nice: got %d, want 0 (not written)", a.AutogroupNice)
	assert.NoError(t, a.Failed)
}

func TestCgroupWithoutCPUController(t *testing.T) {
	_, dir, hasCPU := testCgroup(t, false)
	require.False(t, hasCPU, "a cgroup whose parent enables nothing has no cpu controller")
	cmd := exec.Command("/bin/true")
	g := Group{Cgroup: dir}
	err := g.Start(cmd, Agent, ModeUtility)
	assert.ErrorContains(t, err, "no cpu controller")
	assert.Nil(t, cmd.Process, "a command whose cgroup cannot be prepared must not start")
}

// TestCgroupCallerChoice checks that a command whose SysProcAttr already
// names a cgroup keeps it (started through clone3 from the lowered thread).
// It needs no controller, so it runs wherever cgroup v2 can be mounted.
func TestCgroupCallerChoice(t *testing.T) {
	root, dir, _ := testCgroup(t, false)
	own := mkCgroup(t, filepath.Join(dir, "own"))
	fd, err := unix.Open(own, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	cmd := exec.Command("/bin/sh", "-c", "read stop")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	got := startedIn(t, &Group{Cgroup: dir, OnError: func(error) {}}, cmd, ModeUtility)
	assert.Equal(t, strings.TrimPrefix(own, root), got, "child's cgroup: got %s, want the caller's", got)
	_, err = os.Stat(filepath.Join(dir, fmt.Sprintf("offmain-nice%d", utilityNice)))
	assert.ErrorIs(t, err, os.ErrNotExist, "Start should not have made a leaf of its own")
}

// cpuV1Note says whether a cgroup v1 hierarchy holds the cpu controller (a
// controller serves one hierarchy at a time: cgroups(7), "Cgroups version 2").
func cpuV1Note() string {
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 && slices.Contains(strings.Split(f[1], ","), "cpu") {
			return ": a cgroup v1 hierarchy holds it (/proc/self/cgroup: " + strconv.Quote(l) + ")"
		}
	}
	return ""
}

// TestSubtreeError: each way a cgroup can refuse the cpu controller for its
// children is told apart and says what to do.
func TestSubtreeError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{unix.EBUSY, "JoinLeaf"},
		{os.ErrNotExist, "no cpu controller"},
		{unix.ENOENT, "Delegate=yes, or Delegate=cpu"},
		{unix.EACCES, "systemd-run --user --scope -p Delegate=yes"},
		{unix.EPERM, "not delegated to this user"},
		{unix.EINVAL, "cannot enable the cpu controller"},
	} {
		err := subtreeError("/sys/fs/cgroup/app.scope", fmt.Errorf("write: %w", tc.err))
		assert.ErrorContains(t, err, tc.want, "for %v", tc.err)
		assert.ErrorIs(t, err, tc.err, "for %v", tc.err)
	}
}

// TestCgroupDelegated gives a cgroup to user nobody the way systemd's
// Delegate= does (the directory and its cgroup.procs, cgroup.threads and
// cgroup.subtree_control are the user's) and runs, as that user and inside
// that cgroup (as an app started in a delegated scope is), a helper that
// uses it as Group.Cgroup: first with the app's process still in it, then
// after JoinLeaf moved it into a leaf, then through a Group, whose command
// gets a cgroup of its own below the tier's leaf, killed with cgroup.kill
// at Stop and removed afterwards.
func TestCgroupDelegated(t *testing.T) {
	root, dir, hasCPU := testCgroup(t, true)
	if !hasCPU {
		t.Skipf("the cgroup v2 hierarchy at %s offers no cpu controller%s", root, cpuV1Note())
	}
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		require.NoError(t, os.Chown(filepath.Join(dir, f), 65534, 65534))
	}
	t.Cleanup(func() { _ = os.Remove(filepath.Join(dir, "app")) })
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	cmd := unprivilegedHelperCmd(t, "TestCgroupDelegated", "cgroup-delegated")
	cmd.Env = append(cmd.Env, "QOS_TEST_CGROUP="+dir)
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "helper output:\n%s", out)
	rel := strings.TrimPrefix(dir, root)
	have, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	lever := slices.Contains(strings.Fields(string(have)), "io") && len(diskLines()) > 0 // the I/O lever too
	want := fmt.Sprintf("uid 65534 in %[1]s\nin its own cgroup: EBUSY true, names JoinLeaf true, started false\n"+
		"join: <nil>\nstart: <nil>; child in %[1]s/offmain-nice%[2]d; cpu.weight.nice %[2]d; io.max for every disk: %[3]t\n"+
		"group: <nil>; child in offmain-nice%[2]d/agent; stop killed it: true; its cgroup removed: true\n", rel, utilityNice, lever)
	assert.Equal(t, want, string(out), "helper output: got %q, want %q", out, want)
}
