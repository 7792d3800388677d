//go:build linux

package qos

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// joinCgroup prepares the tier's leaf cgroup for s under o.cgroup, and in
// it the command's own cgroup o.sub if that is not "", and makes cmd start
// there (SysProcAttr.UseCgroupFD: clone3(2) CLONE_INTO_CGROUP, so no thread
// or child of the command runs outside it). A cgroup below the leaf takes
// no controller of its own: its processes count as the leaf's for the cpu
// controller (cgroup-v2.rst, "Top-down Constraint"), and it lets the
// command's tree be killed at once (cgroup.kill). The leaf gets the I/O
// lever too (prepareIO); if that fails, the failure is o.lever and the
// command starts without it. It sets o.leaf and o.dir, where cmd starts;
// release closes the descriptor once the command has started.
func (o *startOpts) joinCgroup(cmd *exec.Cmd, s setting) (release func(), err error) {
	release = func() {}
	if o.cgroup == "" || s.nice == 0 && !s.idle {
		return release, nil
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.UseCgroupFD {
		return release, nil // the caller chose a cgroup
	}
	leaf, err := prepareLeaf(o.cgroup, s)
	if err != nil {
		return nil, err
	}
	o.leaf = leaf
	if err := prepareIO(o.cgroup, leaf); err != nil {
		o.lever = &leverError{err}
	}
	dir := leaf
	if o.sub != "" {
		dir = filepath.Join(leaf, o.sub)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("qos: cgroup: %w", err)
		}
	}
	// O_PATH is enough: the kernel takes the descriptor with fget_raw
	// (kernel/cgroup/cgroup.c, cgroup_css_set_fork).
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if o.sub != "" {
			_ = os.Remove(dir)
		}
		return nil, fmt.Errorf("qos: open cgroup %s: %w", dir, err)
	}
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr // a copy: the caller's may be shared
	}
	attr.UseCgroupFD, attr.CgroupFD = true, fd
	cmd.SysProcAttr = &attr
	o.dir = dir
	return func() { _ = unix.Close(fd) }, nil
}

// prepareLeaf makes (or reuses) the leaf cgroup for s under dir and sets its
// CPU knobs (Documentation/admin-guide/cgroup-v2.rst, "CPU Interface Files"):
// cpu.idle 1 for SCHED_IDLE tiers, else cpu.weight.nice at the tier's nice.
func prepareLeaf(dir string, s setting) (string, error) {
	name, knob, value := "offmain-nice"+strconv.Itoa(s.nice), "cpu.weight.nice", strconv.Itoa(s.nice)
	if s.idle {
		name, knob, value = "offmain-idle", "cpu.idle", "1"
	}
	leaf := filepath.Join(dir, name)
	if err := writeFile(filepath.Join(leaf, knob), value); err == nil {
		return leaf, nil
	}
	if err := enableCPUFor(dir); err != nil {
		return "", err
	}
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("qos: cgroup: %w", err)
	}
	if err := writeFile(filepath.Join(leaf, knob), value); err != nil {
		return "", fmt.Errorf("qos: cgroup: %w", err)
	}
	return leaf, nil
}

// enableCPUFor makes dir hand the cpu controller to its children, checking
// first what would make that fail or go wrong. A delegated cgroup may do it
// itself, but only while no process lives in it: cpu is a threaded
// controller, and a cgroup with processes that enables one becomes a thread
// root, whose child cgroups can hold no process (cgroup-v2.rst, "Threads";
// kernel/cgroup/cgroup.c, cgroup_is_valid_domain): every Start would then
// fail with EOPNOTSUPP.
func enableCPUFor(dir string) error {
	ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if slices.Contains(strings.Fields(string(ctl)), "cpu") {
		return nil
	}
	have, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("qos: cgroup %s: %w", dir, err)
	}
	if !slices.Contains(strings.Fields(string(have)), "cpu") {
		return subtreeError(dir, os.ErrNotExist)
	}
	if procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); len(bytes.TrimSpace(procs)) > 0 {
		pids := strings.Join(strings.Fields(string(procs)), " ")
		return fmt.Errorf("%w (processes in it: %s)", subtreeError(dir, unix.EBUSY), pids)
	}
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu"); err != nil {
		return subtreeError(dir, err)
	}
	return nil
}

// subtreeError explains why dir could not enable the cpu controller for its
// children (Documentation/admin-guide/cgroup-v2.rst; the kernel's answers
// come from cgroup_subtree_control_write in kernel/cgroup/cgroup.c).
func subtreeError(dir string, err error) error {
	const pre = "qos: cgroup %s: cannot enable the cpu controller for its children: "
	switch {
	case errors.Is(err, unix.EBUSY):
		// "No Internal Process Constraint": a cgroup with processes of its
		// own cannot hand controllers to its children.
		return fmt.Errorf(pre+"processes live in it, and cgroup v2 lets only a cgroup without processes "+
			"hand controllers to child cgroups that hold processes; move this process into a leaf first "+
			"(qos.JoinLeaf(%q, \"app\")): %w", dir, dir, err)
	case errors.Is(err, os.ErrNotExist):
		have, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		return fmt.Errorf(pre+"no cpu controller (cgroup.controllers: %q); its parent must enable cpu "+
			"for it (systemd: Delegate=yes, or Delegate=cpu): %w", dir, strings.TrimSpace(string(have)), err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf(pre+"not delegated to this user (its cgroup.subtree_control is not writable); "+
			"run the app in a delegated unit, e.g. systemd-run --user --scope -p Delegate=yes APP: %w", dir, err)
	}
	return fmt.Errorf(pre+"%w", dir, err)
}

// JoinLeaf moves the calling process, every thread of it, into the cgroup
// v2 directory dir/name, made if missing, so that dir can be a [Group]'s
// Cgroup. An app must call it itself, once at start, before the first
// Start: a cgroup delegated to an app (systemd-run --user --scope -p
// Delegate=yes, or a unit with Delegate=) holds the app's own process, and
// cgroup v2 lets only a cgroup without processes give its children the cpu
// controller (cgroup-v2.rst, "No Internal Process Constraint"); which
// cgroup the app's own threads live in is the app's choice, not qos's. The
// move needs write access to dir's cgroup.procs, which delegation gives.
func JoinLeaf(dir, name string) error {
	leaf := filepath.Join(dir, name)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("qos: cgroup: %w", err)
	}
	// Writing a pid to cgroup.procs moves its whole thread group.
	if err := writeFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("qos: join cgroup %s: %w", leaf, err)
	}
	return nil
}
