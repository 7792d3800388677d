//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
)

// TestIOMaxLines: each disk with a device gets the model of its class at
// a quarter, as blk-iocost classes it (ioc_autop_idx); loop devices and
// others without a device get none.
func TestIOMaxLines(t *testing.T) {
	dir := t.TempDir()
	disk := func(name, dev, rotational, queueDepth string, device bool) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name, "queue"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, "dev"), []byte(dev+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, "queue", "rotational"), []byte(rotational+"\n"), 0o644))
		if device {
			require.NoError(t, os.Mkdir(filepath.Join(dir, name, "device"), 0o755))
			if queueDepth != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name, "device", "queue_depth"), []byte(queueDepth+"\n"), 0o644))
			}
		}
	}
	disk("vda", "254:0", "1", "", true)
	disk("nvme0n1", "259:0", "0", "", true)
	disk("sda", "8:0", "0", "1", true)
	disk("sdb", "8:16", "0", "32", true)
	disk("loop0", "7:0", "1", "", false)
	disk("mmcblk0", "179:0", "0", "", true) // no queue_depth: blk_queue_depth falls back to nr_requests
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mmcblk0", "queue", "nr_requests"), []byte("1\n"), 0o644))
	want := []string{
		"179:0 rbps=61463798 wbps=35341252 riops=1736 wiops=6699",
		"254:0 rbps=43504794 wbps=44518966 riops=92 wiops=94",       // rotational: AUTOP_HDD
		"259:0 rbps=122159157 wbps=106972887 riops=2129 wiops=5485", // AUTOP_SSD_DFL
		"8:0 rbps=61463798 wbps=35341252 riops=1736 wiops=6699",     // queue depth 1: AUTOP_SSD_QD1
		"8:16 rbps=122159157 wbps=106972887 riops=2129 wiops=5485",
	}
	slices.Sort(want)
	assert.Equal(t, want, ioMaxLines(dir, nil))
}

// startReading starts, with start, a shell that waits on its stdin, with
// attr as its SysProcAttr, and ends it as the test ends.
func startReading(t *testing.T, attr *syscall.SysProcAttr, start func(*exec.Cmd) error) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read stop")
	cmd.SysProcAttr = attr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, start(cmd))
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	return cmd
}

// ioCgroup is testCgroup with the io controller: with io set, the cgroup
// has it the way a delegation that includes io gives it; without, its
// parent hands it cpu alone, as systemd's user@.service does by default.
func ioCgroup(t *testing.T, io bool) (root, dir string) {
	t.Helper()
	root, dir, hasCPU := testCgroup(t, true)
	have, _ := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	if !hasCPU || !slices.Contains(strings.Fields(string(have)), "io") {
		t.Skipf("the cgroup v2 hierarchy at %s hands its children no cpu and io controllers (cgroup.subtree_control: %q)%s",
			root, strings.TrimSpace(string(have)), cpuV1Note())
	}
	if !io {
		require.NoError(t, writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu"))
		dir = mkCgroup(t, filepath.Join(dir, "cpu-only"))
	}
	return root, dir
}

// TestIOLever: a Group whose Cgroup has the io controller gives the tier's
// leaf io.max for every disk, with the memory controller (writeback is
// charged only with both), and Inspect reads the levers back.
func TestIOLever(t *testing.T) {
	_, dir := ioCgroup(t, true)
	g := &Group{Cgroup: dir, OnError: func(error) {}}
	unhooked(t)
	cmd := startReading(t, nil, func(cmd *exec.Cmd) error { return g.Start(cmd, Agent, ModeUtility) })
	on, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	assert.Subset(t, strings.Fields(string(on)), []string{"cpu", "io", "memory"}, "controllers for the leaves: got %q", on)
	lines := diskLines()
	require.NotEmpty(t, lines, "the VM has a disk (vda)")
	b, err := os.ReadFile(filepath.Join(dir, "offmain-nice15", "io.max"))
	require.NoError(t, err)
	assert.Equal(t, lines, sortedLines(b), "io.max of the tier's leaf")
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Contains(t, a.Levers, "cpu.weight.nice 15", "levers: got %q", a.Levers)
	assert.Contains(t, a.Levers, "io.max "+lines[0], "levers: got %q", a.Levers)
	assert.Empty(t, a.Missing, "nothing is missing")
	assert.Equal(t, filepath.Join(dir, "offmain-nice15"), a.Cgroup, "cgroup")
	assert.Contains(t, a.String(), "; cgroup lever: cpu.weight.nice 15, io.max ", "String: got %q", a.String())
}

// TestParseCostModels: io.cost.model as blk-iocost prints it
// (ioc_cost_model_prfill) gives each listed disk's figures; a line
// without all four that io.max takes, or with one at 0, gives none.
func TestParseCostModels(t *testing.T) {
	got := parseCostModels("8:0 ctrl=user model=linear rbps=2706339840 rseqiops=89698 rrandiops=110036 wbps=1063126016 wseqiops=135560 wrandiops=130734\n" +
		"254:0 ctrl=auto model=linear rbps=174019176 rseqiops=41708 rrandiops=370 wbps=178075866 wseqiops=42705 wrandiops=378\n" +
		"8:16 ctrl=user model=linear rbps=0 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 wrandiops=1\n" +
		"8:32 ctrl=user rbps=1000\n\n")
	assert.Equal(t, map[string]ioModel{
		"8:0":   {rbps: 2706339840, wbps: 1063126016, riops: 110036, wiops: 130734},
		"254:0": modelHDD,
	}, got)
}

// TestIOMaxLinesCostModel: a disk the kernel holds a cost model for gets
// a quarter of that model, whatever its class; the others their class's.
func TestIOMaxLinesCostModel(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []struct{ name, dev string }{{"sda", "8:0"}, {"sdb", "8:16"}} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d.name, "device"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d.name, "queue"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, d.name, "dev"), []byte(d.dev+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, d.name, "queue", "rotational"), []byte("1\n"), 0o644))
	}
	models := map[string]ioModel{"8:0": {rbps: 20000000, wbps: 10000000, riops: 200, wiops: 5}}
	assert.Equal(t, []string{
		"8:0 rbps=5000000 wbps=2500000 riops=50 wiops=2", // measured: a quarter, but never below 2
		"8:16 rbps=43504794 wbps=44518966 riops=92 wiops=94",
	}, ioMaxLines(dir, models))
}

// TestIOLeverCostModel: where the root cgroup's io.cost.model holds a
// model for a disk (written here as systemd-iocost writes the one its
// hwdb has for a known disk), a Group's tier leaf gets a quarter of it in
// io.max. At the end a disk that had figures written for it (ctrl=user)
// gets them back; any other is left at ctrl=auto, blk-iocost's own
// model, which it keeps until the next boot once it was set up for the
// disk (blk_iocost_init; nothing takes it down), with its control off.
// It needs root and a kernel with blk-iocost, and runs in CI's VM.
func TestIOLeverCostModel(t *testing.T) {
	_, dir := ioCgroup(t, true)
	file := filepath.Join(mountinfo.Cgroup2(), costModelFile)
	before, err := os.ReadFile(file)
	if err != nil {
		t.Skipf("no %s: a kernel without blk-iocost (CONFIG_BLK_CGROUP_IOCOST): %v", file, err)
	}
	lines := ioMaxLines(sysBlock, nil)
	require.NotEmpty(t, lines, "the VM has a disk (vda)")
	dev, _, _ := strings.Cut(lines[0], " ")
	const measured = "rbps=20971520 rseqiops=5120 rrandiops=200 wbps=10485760 wseqiops=2560 wrandiops=100"
	err = writeFile(file, dev+" ctrl=user model=linear "+measured)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		t.Skipf("writing %s needs root: %v", file, err)
	}
	require.NoError(t, err, "writing %s", file)
	t.Cleanup(func() {
		// Back as it was: the figures it had if a user set them, else
		// the kernel's own for the disk's class.
		restore := dev + " ctrl=auto"
		for l := range strings.Lines(string(before)) {
			if f := strings.Fields(l); len(f) > 1 && f[0] == dev && f[1] == "ctrl=user" {
				restore = strings.Join(f, " ")
			}
		}
		assert.NoError(t, writeFile(file, restore), "putting back %s's model", dev)
	})
	want := dev + " rbps=5242880 wbps=2621440 riops=50 wiops=25"
	require.Contains(t, diskLines(), want)
	g := &Group{Cgroup: dir, OnError: func(err error) {
		if _, ok := errors.AsType[*leverError](err); ok {
			t.Error(err)
		}
	}}
	unhooked(t)
	startReading(t, nil, func(cmd *exec.Cmd) error { return g.Start(cmd, Agent, ModeUtility) })
	b, err := os.ReadFile(filepath.Join(dir, "offmain-nice15", "io.max"))
	require.NoError(t, err)
	assert.Contains(t, sortedLines(b), want, "io.max of the tier's leaf")
}

// TestIOLeverFailureToldOnce: a Group whose tier leaf cannot take the
// I/O lever (here its io.max is covered by a read-only bind mount, so the
// write fails with EROFS) starts each command in the leaf without it and
// tells the failure once, whether the app (no Main) or a holder set the
// leaf up. It needs root (mount(2)) and runs in CI's VM.
func TestIOLeverFailureToldOnce(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "held"}[held], func(t *testing.T) {
			_, dir := ioCgroup(t, true)
			require.NoError(t, writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu +io +memory"))
			leaf := filepath.Join(dir, "offmain-nice15")
			require.NoError(t, os.Mkdir(leaf, 0o755))
			require.NoError(t, writeFile(filepath.Join(leaf, "cpu.weight.nice"), "15"))
			ioMax := filepath.Join(leaf, "io.max")
			cover := filepath.Join(t.TempDir(), "io.max")
			require.NoError(t, os.WriteFile(cover, nil, 0o644))
			if err := unix.Mount(cover, ioMax, "", unix.MS_BIND, ""); err != nil {
				t.Skipf("a bind mount needs root: %v", err)
			}
			t.Cleanup(func() { assert.NoError(t, unix.Unmount(ioMax, 0)) })
			require.NoError(t, unix.Mount("", ioMax, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""))

			var told []error
			g := &Group{Cgroup: dir, OnError: func(err error) {
				if _, ok := errors.AsType[*leverError](err); ok {
					told = append(told, err)
				}
			}}
			if !held {
				unhooked(t)
			}
			for range 3 {
				cmd := startReading(t, nil, func(cmd *exec.Cmd) error { return g.Start(cmd, Agent, ModeUtility) })
				a, err := Inspect(cmd.Process.Pid)
				require.NoError(t, err)
				assert.True(t, a.Cgroup == leaf || filepath.Dir(a.Cgroup) == leaf, "the command runs in the tier's leaf: got %s", a.Cgroup)
			}
			require.Len(t, told, 1, "told: %q", told)
			assert.ErrorIs(t, told[0], unix.EROFS)
			assert.ErrorContains(t, told[0], "the I/O lever: io.max")
		})
	}
}

// TestIOLeverNotDelegated: without the io controller a Group starts as
// before, its leaf has no io.max, and Inspect names the missing lever and
// the line that gets it.
func TestIOLeverNotDelegated(t *testing.T) {
	_, dir := ioCgroup(t, false)
	g := &Group{Cgroup: dir, OnError: func(error) {}}
	unhooked(t)
	cmd := startReading(t, nil, func(cmd *exec.Cmd) error { return g.Start(cmd, Agent, ModeUtility) })
	_, err := os.Stat(filepath.Join(dir, "offmain-nice15", "io.max"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a leaf without the io controller has no io.max")
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, []string{"cpu.weight.nice 15"}, a.Levers, "levers")
	require.Len(t, a.Missing, 1, "missing: got %q", a.Missing)
	assert.Contains(t, a.Missing[0], "I/O lever: the io controller is not delegated to "+dir, "missing")
	assert.Contains(t, a.Missing[0], "Delegate=pids memory cpu io", "missing: the line that gets it")
}

// TestInspectMissingCgroupLever: a lowered process in a cgroup that is
// no tier's is told how to get the cgroup lever; the app's own process,
// at its own tier, is not.
func TestInspectMissingCgroupLever(t *testing.T) {
	_, dir, _ := testCgroup(t, false)
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	inDir := &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	// A runner already at the Agent tier's nice is lowered by SCHED_IDLE.
	own, err := readThread(os.Getpid(), os.Getpid())
	require.NoError(t, err)
	mode := ModeUtility
	if own.nice >= utilityNice {
		mode = ModeBackground
	}
	if own.policy == unix.SCHED_IDLE {
		t.Skip("the test runs at SCHED_IDLE: no tier is below it")
	}
	cmd := startReading(t, inDir, func(cmd *exec.Cmd) error { return Start(cmd, Agent, mode) })
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, dir, a.Cgroup, "cgroup")
	require.Len(t, a.Missing, 1, "missing: got %q", a.Missing)
	assert.Contains(t, a.Missing[0], "systemd-run --user --scope -p Delegate=yes", "missing")
	app, err := Inspect(os.Getpid())
	require.NoError(t, err)
	assert.Empty(t, app.Missing, "the app itself misses nothing")
	serving := startReading(t, inDir, func(cmd *exec.Cmd) error { return Start(cmd, Serving, mode) })
	s, err := Inspect(serving.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, dir, s.Cgroup, "cgroup")
	assert.Empty(t, s.Missing, "a child at the app's own tier misses nothing")
}

// sortedLines returns the lines of a cgroup file, sorted: the kernel lists
// a nested-keyed file's devices in no set order (cgroup-v2.rst).
func sortedLines(b []byte) []string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(lines)
	return lines
}

// TestReadLevers: what Inspect says of the cgroup lever, from the cgroup
// files as the kernel shows them: the knobs that hold the process, and,
// only for a process below the app's tier, what it goes without and the
// line that gets it.
func TestReadLevers(t *testing.T) {
	const hdd = "254:0 rbps=43504794 wbps=44518966 riops=92 wiops=94"
	tests := []struct {
		name        string
		controllers string // the Group's Cgroup's cgroup.controllers
		enabled     string // its cgroup.subtree_control; "": as controllers
		ioMax       string // the leaf's io.max; "-": no such file
		outside     bool   // the process is in no tier leaf
		lowered     bool
		levers      []string
		missing     []string // each entry's substrings, split by "|"
	}{
		{name: "cpu and I/O lever", controllers: "cpu io memory", ioMax: hdd, lowered: true,
			levers: []string{"cpu.weight.nice 15", "io.max " + hdd}},
		{name: "io not delegated", controllers: "cpu memory pids", ioMax: "-", lowered: true,
			levers:  []string{"cpu.weight.nice 15"},
			missing: []string{"the io controller is not delegated|Delegate=pids memory cpu io, runs systemctl daemon-reload"}},
		{name: "io without memory", controllers: "cpu io", ioMax: hdd, lowered: true,
			levers:  []string{"cpu.weight.nice 15", "io.max " + hdd},
			missing: []string{"the memory controller is not delegated"}},
		{name: "io not enabled for the leaves", controllers: "cpu io memory", enabled: "cpu", ioMax: "-", lowered: true,
			levers:  []string{"cpu.weight.nice 15"},
			missing: []string{"the io controller is not enabled for the children|through OnError or the log"}},
		{name: "no blk-throttle", controllers: "cpu io memory", ioMax: "-", lowered: true,
			levers:  []string{"cpu.weight.nice 15"},
			missing: []string{"CONFIG_BLK_DEV_THROTTLING"}},
		{name: "io.max not set", controllers: "cpu io memory", ioMax: "254:0 rbps=max wbps=max riops=max wiops=max\n", lowered: true,
			levers:  []string{"cpu.weight.nice 15"},
			missing: []string{"io.max is not set|no disk with a device took a limit"}},
		{name: "not lowered: nothing missing", controllers: "cpu memory", ioMax: "-",
			levers: []string{"cpu.weight.nice 15"}},
		{name: "outside the lever, lowered", outside: true, lowered: true,
			missing: []string{"systemd-run --user --scope -p Delegate=yes"}},
		{name: "outside the lever, the app's own tier", outside: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			leaf := filepath.Join(dir, "offmain-nice15")
			require.NoError(t, os.MkdirAll(filepath.Join(leaf, "agent-7"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(tc.controllers+"\n"), 0o644))
			enabled := tc.enabled
			if enabled == "" {
				enabled = tc.controllers
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(enabled+"\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(leaf, "cpu.weight.nice"), []byte("15\n"), 0o644))
			if tc.ioMax != "-" {
				require.NoError(t, os.WriteFile(filepath.Join(leaf, "io.max"), []byte(tc.ioMax), 0o644))
			}
			a := Applied{Cgroup: filepath.Join(leaf, "agent-7")}
			if tc.outside {
				a.Cgroup = dir
			}
			readLevers(&a, tc.lowered)
			assert.Equal(t, tc.levers, a.Levers, "levers")
			require.Len(t, a.Missing, len(tc.missing), "missing: got %q", a.Missing)
			for i, m := range tc.missing {
				for sub := range strings.SplitSeq(m, "|") {
					assert.Contains(t, a.Missing[i], sub)
				}
			}
		})
	}
}

// TestPrepareIOKeepsLines: a leaf that has the lines already is not
// written to, for each write starts blk-throttle's accounting afresh; a
// line that differs is written.
func TestPrepareIOKeepsLines(t *testing.T) {
	lines := diskLines()
	if len(lines) == 0 {
		t.Skip("this machine lists no disk with a device in", sysBlock)
	}
	dir := t.TempDir()
	leaf := filepath.Join(dir, "offmain-nice15")
	require.NoError(t, os.Mkdir(leaf, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpu io memory\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("cpu io memory\n"), 0o644))
	ioMax := filepath.Join(leaf, "io.max")
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, os.WriteFile(ioMax, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	require.NoError(t, os.Chtimes(ioMax, old, old))
	require.NoError(t, prepareIO(dir, leaf))
	fi, err := os.Stat(ioMax)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(old), "io.max written though it had every line")

	require.NoError(t, os.WriteFile(ioMax, []byte("1:2 rbps=max wbps=max riops=max wiops=max\n"), 0o644))
	require.NoError(t, prepareIO(dir, leaf))
	b, err := os.ReadFile(ioMax)
	require.NoError(t, err)
	assert.Contains(t, string(b), lines[len(lines)-1], "a missing line is written (a file keeps the last)")
}

// TestLimits: an io.max line with every limit at max sets none.
func TestLimits(t *testing.T) {
	assert.True(t, limits("254:0 rbps=43504794 wbps=44518966 riops=92 wiops=94"))
	assert.True(t, limits("254:0 rbps=max wbps=max riops=92 wiops=max"))
	assert.False(t, limits("254:0 rbps=max wbps=max riops=max wiops=max"))
	assert.False(t, limits(""))
}

// TestIOLeverErrorStartsAnyway: when the I/O lever cannot be set (here
// the io controller cannot be enabled for the leaves) the command still
// gets its leaf, and the error goes to the Group's report.
func TestIOLeverErrorStartsAnyway(t *testing.T) {
	dir, leaf := leverless(t)
	cmd := exec.Command("/bin/true")
	o := &startOpts{cgroup: dir}
	release, err := o.joinCgroup(cmd, settingFor(Agent, ModeUtility))
	require.NoError(t, err, "the I/O lever's failure does not stop the start")
	defer release()
	assert.Equal(t, leaf, o.leaf)
	assert.Equal(t, leaf, o.dir)
	require.NotNil(t, cmd.SysProcAttr)
	assert.True(t, cmd.SysProcAttr.UseCgroupFD, "the command starts in its leaf")
	require.Error(t, o.lever)
	assert.ErrorContains(t, o.lever, "the I/O lever: enabling the memory controller")
	assert.ErrorIs(t, o.lever, os.ErrNotExist)
	_, ok := errors.AsType[*leverError](o.lever)
	assert.True(t, ok, "the failure is the leaf's, which a Group tells once: %T", o.lever)
}

// leverless makes a directory that passes for a delegated cgroup with the
// io controller whose Agent tier leaf cannot get the I/O lever: it has no
// cgroup.subtree_control, so enabling a controller fails (ENOENT).
func leverless(t *testing.T) (dir, leaf string) {
	dir = t.TempDir()
	leaf = filepath.Join(dir, "offmain-nice15")
	require.NoError(t, os.Mkdir(leaf, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(leaf, "cpu.weight.nice"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpu io memory\n"), 0o644))
	return dir, leaf
}

// TestIOLeverToldOnFailedStart: a Start that fails after its tier leaf
// could not get the I/O lever (here the command does not exist) still
// tells the lever's failure, once for the run, as the leaf's; the app
// gets each start's own error. It holds whether the app (no Main) or a
// holder set the leaf up.
func TestIOLeverToldOnFailedStart(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "held"}[held], func(t *testing.T) {
			dir, _ := leverless(t)
			var told []error
			g := &Group{Cgroup: dir, OnError: func(err error) { told = append(told, err) }}
			if !held {
				unhooked(t)
			}
			for range 3 {
				err := g.Start(exec.Command("/nonexistent/agent"), Agent, ModeUtility)
				require.Error(t, err, "a command that does not exist starts")
			}
			var levers []error
			for _, err := range told {
				if _, ok := errors.AsType[*leverError](err); ok {
					levers = append(levers, err)
				}
			}
			require.Len(t, levers, 1, "told: %q", told)
			assert.ErrorIs(t, levers[0], os.ErrNotExist)
			assert.ErrorContains(t, levers[0], "qos: cgroup "+dir+": the I/O lever: enabling the memory controller")
		})
	}
}

// TestIOLeverToldOnce: a Group tells the I/O lever's failure at a tier
// leaf once for each run of the same failure, whether the app met it or a
// holder did (and sent it with the leaf), and whether or not the command
// started: every later Start in the tier meets it again. A Start that got the lever ends
// the run; a different failure, or another leaf's, is told; any other
// error is told each time.
func TestIOLeverToldOnce(t *testing.T) {
	var told []error
	g := &Group{OnError: func(err error) { told = append(told, err) }}
	const a, b = "/a/offmain-nice15", "/b/offmain-idle"
	noFile := &leverError{fmt.Errorf("qos: cgroup /a: the I/O lever: enabling the memory controller for its children: %w", unix.ENOENT)}
	busy := &leverError{fmt.Errorf("qos: cgroup /b: the I/O lever: enabling the io controller for its children: %w", unix.EBUSY)}
	other := errors.New("qos: start /bin/sh: not held")
	g.tellLever(a, noFile)
	g.tellLever(a, noFile)
	g.tellSteps("/bin/sh", helperStatus{Agent: 42, Cgroup: a + "/agent-42", Leaf: a, Lever: leverOf(noFile)})
	g.tellSteps("/bin/sh", helperStatus{Agent: 43, Cgroup: b + "/agent-43", Leaf: b, Lever: leverOf(busy)})
	g.tellSteps("/bin/sh", helperStatus{Err: "fork/exec /bin/sh: no such file", Leaf: b, Lever: leverOf(busy)}) // a failed start
	require.Len(t, told, 2, "told: %q", told)
	assert.ErrorIs(t, told[0], os.ErrNotExist)
	assert.Equal(t, busy.Error(), told[1].Error(), "a holder's lever failure is the leaf's, not its command's")
	assert.ErrorIs(t, told[1], unix.EBUSY, "the errno crosses from the holder")
	_, ok := errors.AsType[*leverError](told[1])
	assert.True(t, ok, "a holder's lever failure is a *leverError in the app: %T", told[1])

	g.tellSteps("/bin/sh", helperStatus{Agent: 45, Cgroup: a + "/agent-45", Leaf: a}) // the lever worked
	g.tellLever(a, noFile)
	again := &leverError{fmt.Errorf("qos: cgroup /a: the I/O lever: io.max %q: %w", "254:0 rbps=1", unix.EINVAL)}
	g.tellLever(a, again)
	g.tellLever(b, nil)
	g.tellLever(b, busy)
	g.report(other)
	g.report(other)
	require.Len(t, told, 7, "told: %q", told)
	assert.Equal(t, []string{noFile.Error(), again.Error(), busy.Error(), other.Error(), other.Error()},
		[]string{told[2].Error(), told[3].Error(), told[4].Error(), told[5].Error(), told[6].Error()})
}
