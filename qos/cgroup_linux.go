//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// joinCgroup prepares the leaf cgroup for s under o.Cgroup and makes cmd
// start in it (SysProcAttr.UseCgroupFD: clone3(2) CLONE_INTO_CGROUP, so no
// thread or child of the command runs outside it). release closes the
// descriptor once the command has started.
func (o Options) joinCgroup(cmd *exec.Cmd, s setting) (release func(), err error) {
	release = func() {}
	if o.Cgroup == "" || s.nice == 0 && !s.idle {
		return release, nil
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.UseCgroupFD {
		return release, nil // the caller chose a cgroup
	}
	leaf, err := prepareLeaf(o.Cgroup, s)
	if err != nil {
		return nil, err
	}
	// O_PATH is enough: the kernel takes the descriptor with fget_raw
	// (kernel/cgroup/cgroup.c, cgroup_css_set_fork).
	fd, err := unix.Open(leaf, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("qos: open cgroup %s: %w", leaf, err)
	}
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr // a copy: the caller's may be shared
	}
	attr.UseCgroupFD, attr.CgroupFD = true, fd
	cmd.SysProcAttr = &attr
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
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("qos: cgroup: %w", err)
	}
	err := writeFile(filepath.Join(leaf, knob), value)
	if errors.Is(err, os.ErrNotExist) {
		// The knob appears once dir enables the cpu controller for its
		// children; a delegated cgroup may do that itself.
		_ = writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpu")
		err = writeFile(filepath.Join(leaf, knob), value)
	}
	if errors.Is(err, os.ErrNotExist) {
		have, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		return "", fmt.Errorf("qos: cgroup %s: no cpu controller (cgroup.controllers: %q): %w",
			dir, strings.TrimSpace(string(have)), err)
	}
	if err != nil {
		return "", fmt.Errorf("qos: cgroup: %w", err)
	}
	return leaf, nil
}
