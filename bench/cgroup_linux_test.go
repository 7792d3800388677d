//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// cgroupHelperEnv makes the test binary run the bench with the arguments
// it holds (one per line) and exit: TestCgroupArms starts it in a cgroup,
// as an app in a delegated unit is started.
const cgroupHelperEnv = "OFFMAIN_BENCH_CGROUP_HELPER"

// TestCgroupArms runs the cgroup arms, with and without the io controller,
// as root and as user nobody in a cgroup delegated to it the way systemd's
// Delegate= does it, each time in a helper process started in that cgroup.
// It needs the cpu and io controllers on the cgroup v2 hierarchy, which
// this project's VM has (.ci/qos-vm; on the CI machine cgroup v1 holds
// them), and a scratch folder on a block device (OFFMAIN_BENCH_DISK, else
// the temp dir).
func TestCgroupArms(t *testing.T) {
	if args := os.Getenv(cgroupHelperEnv); args != "" {
		err := run(t.Context(), strings.Split(args, "\n"), os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup to delegate needs root; CI's VM runs this as root")
	}
	root := cgroup2Root()
	if have := controllers(filepath.Join(root, "cgroup.subtree_control")); !slices.Contains(have, "cpu") || !slices.Contains(have, "io") {
		t.Skipf("the cgroup v2 hierarchy at %s hands its children no cpu and io controllers (cgroup.subtree_control: %q): a cgroup v1 hierarchy holds them here; .ci/qos-vm runs this", root, have)
	}
	disk := os.Getenv("OFFMAIN_BENCH_DISK")
	if disk == "" {
		disk = os.TempDir()
	}
	dev, err := diskDev(disk)
	if err != nil {
		t.Skipf("the scratch folder needs a block device for the io controller's knobs: %v", err)
	}
	for _, who := range []struct {
		name string
		uid  uint32
	}{{"root", 0}, {"nobody", 65534}} {
		t.Run(who.name, func(t *testing.T) {
			dir := delegatedCgroup(t, root, who.uid)
			scratch, err := os.MkdirTemp(disk, "offmain bench test *")
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, os.RemoveAll(scratch)) })
			require.NoError(t, os.Chown(scratch, int(who.uid), int(who.uid)))
			out := filepath.Join(scratch, "out.json")
			// 3 s windows: under TCG on a loaded host, a 1 s window once
			// gave a probe of the arm no sample, which fails the run.
			rep := runInCgroup(t, dir, who.uid, "-quick", "-quiet", "-duration", "3s", "-spinners", "2",
				"-arms", "idle,cgroup-noio,cgroup,cgroup+io.max:50", "-cgroup", dir, "-dir", scratch, "-json", out)
			for _, a := range []string{"cgroup-noio", "cgroup"} {
				note := rep.Env.Applied[a]
				assert.Contains(t, note, "cgroup offmain-bench/offmain-nice", "arm %s: got %q, want its workers in qos's leaf", a, note)
				hasRows := slices.ContainsFunc(rep.Rows, func(r row) bool { return r.Arm == a && r.Probe == "burst" })
				assert.True(t, hasRows, "arm %s: got no burst rows", a)
			}
			noio := rep.Env.Applied["cgroup-noio"]
			assert.Contains(t, noio, "no io controller, no I/O setting", "cgroup-noio: got %q", noio)
			with := rep.Env.Applied["cgroup"]
			assert.NotContains(t, with, "no io controller", "cgroup: got %q, want the io controller in the agents' leaf", with)
			want := "io.max " + dev + " rbps="
			if b, err := os.ReadFile("/sys/dev/block/" + dev + "/queue/rotational"); err == nil && strings.TrimSpace(string(b)) == "1" {
				want = "io.max " + dev + " rbps=43504794 wbps=44518966 riops=92 wiops=94" // a quarter of blk-iocost's HDD model
			}
			assert.Contains(t, with, want, "cgroup: got %q, want qos's I/O lever on the agents' leaf", with)
			capped := rep.Env.Applied["cgroup+io.max:50"]
			assert.Contains(t, capped, "io.max "+dev+" rbps=50000000 wbps=50000000", "cgroup+io.max:50: got %q", capped)
		})
	}
}

// delegatedCgroup makes a cgroup below root for the test and gives it to
// uid as systemd's Delegate= does (the directory, its cgroup.procs,
// cgroup.subtree_control and cgroup.threads: src/shared/cgroup-setup.c,
// cg_set_access), and removes it, and what the bench made in it, at the end.
func delegatedCgroup(t *testing.T, root string, uid uint32) string {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("offmain-bench-test-%d-%d", os.Getpid(), uid))
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		// Children first: a cgroup is removed only once it has none.
		var dirs []string
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			assert.NoError(t, os.Remove(d), "removing cgroup %s", d)
		}
	})
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		require.NoError(t, os.Chown(filepath.Join(dir, f), int(uid), int(uid)))
	}
	return dir
}

// runInCgroup runs the bench with args as uid in a helper process started
// in cgroup dir (clone3 CLONE_INTO_CGROUP) and returns its JSON report
// (the -json file, the last argument).
func runInCgroup(t *testing.T, dir string, uid uint32, args ...string) splitReport {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	cmd := exec.Command(exeFor(t, uid), "-test.run=^TestCgroupArms$")
	cmd.Env = append(os.Environ(), cgroupHelperEnv+"="+strings.Join(args, "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: uid}
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	require.NoError(t, cmd.Run(), "bench as uid %d in %s; stderr:\n%s", uid, dir, stderr.String())
	var rep splitReport
	b, err := os.ReadFile(args[len(args)-1])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	return rep
}

// exeFor returns the test binary for uid to run: go test builds it in a
// directory only its owner may enter, so another user gets a copy in a
// directory it can reach.
func exeFor(t *testing.T, uid uint32) string {
	t.Helper()
	if uid == uint32(os.Geteuid()) {
		return testExe(t)
	}
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	b, err := os.ReadFile(testExe(t))
	require.NoError(t, err)
	bin := filepath.Join(dir, "bench.test")
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	return bin
}
