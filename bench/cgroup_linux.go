//go:build linux

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
	"github.com/offmain/offmain/qos"
)

// benchCgroup is the cgroup delegated to the bench (-cgroup DIR) and what
// the bench made in it: DIR/offmain-bench stands for the app's delegated
// cgroup (the Group's Cgroup), DIR/offmain-bench/app is the bench's own
// leaf, and qos makes the agents' leaves beside it. Whether the io
// controller reaches offmain-bench is DIR's subtree_control, which the bench
// sets per arm, as a delegation that includes io or not would.
type benchCgroup struct {
	dir, app, leaf string
	dev            string // "MAJ:MIN" of the disk the scratch folder is on
	root           string // the cgroup2 mount: io.cost.qos lives there
	group          *qos.Group
	costOn         bool // io.cost was turned on for dev by this run
}

// newBenchCgroup moves the bench into its leaf and hands the cpu, memory
// and io controllers, as far as dir has them, to offmain-bench. scratch is
// a path on the disk the load will use. It fails at once where an arm of
// arms could not run.
func newBenchCgroup(dir, scratch string, arms []arm) (*benchCgroup, error) {
	c := &benchCgroup{dir: dir, app: filepath.Join(dir, "offmain-bench"), root: cgroup2Root()}
	c.leaf = filepath.Join(c.app, "app")
	have := controllers(filepath.Join(dir, "cgroup.controllers"))
	for _, a := range arms {
		if !a.setsKnob() {
			continue
		}
		if !slices.Contains(have, "io") {
			return nil, fmt.Errorf("%w: -arms: %s needs the io controller in %s, which has %q (see bench/README.md on delegating io)", errUsage, a.name, dir, strings.Join(have, " "))
		}
		if a.io.knob == "io.weight" && unix.Access(filepath.Join(c.root, "io.cost.qos"), unix.W_OK) != nil {
			return nil, fmt.Errorf("%w: -arms: %s turns io.cost on for the disk, in %s/io.cost.qos, which only root may write", errUsage, a.name, c.root)
		}
		if c.dev == "" {
			// The knobs take a disk; the other arms run on any filesystem.
			dev, err := diskDev(scratch)
			if err != nil {
				return nil, fmt.Errorf("-cgroup: %s: the disk of %s: %w", a.name, scratch, err)
			}
			c.dev = dev
		}
	}
	if err := os.Mkdir(c.app, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("-cgroup: %w", err)
	}
	// The bench's probes stand for the app: in a leaf of the app's cgroup,
	// beside the agents' (qos.JoinLeaf's doc says why an app does this).
	if err := qos.JoinLeaf(c.app, "app"); err != nil {
		return nil, fmt.Errorf("-cgroup: %w", err)
	}
	if !slices.Contains(have, "cpu") {
		return nil, fmt.Errorf("-cgroup: %s has no cpu controller (cgroup.controllers: %q)", dir, strings.Join(have, " "))
	}
	for _, ctl := range []string{"cpu", "memory"} {
		if err := c.enable(dir, ctl, have); err != nil {
			return nil, err
		}
	}
	// Memory reaches the agents' leaves in every arm, as a delegation
	// gives it: with io, writeback is charged to the cgroup that dirtied a
	// page only where both are enabled (cgroup-v2.rst, "Writeback"). The
	// io controller is set per arm (prepare).
	if err := c.enable(c.app, "memory", controllers(filepath.Join(c.app, "cgroup.controllers"))); err != nil {
		return nil, err
	}
	// The Group says once that, without qos.Main in the bench, it does not
	// hold what a worker leaves behind: the bench kills its workers by
	// process group itself. A step that failed after a start would show in
	// checkApplied's read-back of every thread.
	c.group = &qos.Group{Cgroup: c.app, OnError: func(error) {}}
	return c, nil
}

// enable hands controller ctl of dir to its children if dir has it.
func (c *benchCgroup) enable(dir, ctl string, have []string) error {
	if !slices.Contains(have, ctl) || slices.Contains(controllers(filepath.Join(dir, "cgroup.subtree_control")), ctl) {
		return nil
	}
	if err := writeCgroup(filepath.Join(dir, "cgroup.subtree_control"), "+"+ctl); err != nil {
		return fmt.Errorf("-cgroup: enabling %s for the children of %s: %w", ctl, dir, err)
	}
	return nil
}

// start starts a worker of cgroup arm a through the Group.
func (c *benchCgroup) start(cmd *exec.Cmd, a arm) error {
	return c.group.Start(cmd, qos.Agent, qos.ModeUtility)
}

// prepare runs before every arm's window, idle's too: every I/O setting
// back to the kernel's default, then the io controller handed down to the
// agents' leaves, as a delegation that includes io gives it, or, for
// cgroup-noio, withdrawn from offmain-bench and its children. So each arm
// starts from the same controllers whatever ran before it.
func (c *benchCgroup) prepare(a arm) error {
	if err := c.reset(); err != nil {
		return err
	}
	if a.kind == armCgroup && a.io.knob == ioOff {
		for _, d := range []string{c.app, c.dir} { // children first: a parent keeps io while a child uses it
			if slices.Contains(controllers(filepath.Join(d, "cgroup.subtree_control")), "io") {
				if err := writeCgroup(filepath.Join(d, "cgroup.subtree_control"), "-io"); err != nil {
					return fmt.Errorf("withdrawing the io controller from the children of %s: %w", d, err)
				}
			}
		}
		return nil
	}
	// A knob goes on once qos has made the leaf (afterStart), but the
	// controller must reach the leaf before the workers dirty a page: an
	// inode's writeback is charged to the cgroup that first dirtied it
	// (cgroup-v2.rst, "Writeback").
	for _, d := range []string{c.dir, c.app} {
		if err := c.enable(d, "io", controllers(filepath.Join(d, "cgroup.controllers"))); err != nil {
			return err
		}
	}
	return nil
}

// afterStart sets an exploration arm's knob once its workers run (and qos
// has made their leaf), after putting every I/O knob back to its default.
func (c *benchCgroup) afterStart(a arm, worker int) error {
	if !a.setsKnob() {
		return nil
	}
	leaf, err := c.leafOf(worker)
	if err != nil {
		return err
	}
	if err := c.reset(); err != nil {
		return err
	}
	v := a.io.value
	switch a.io.knob {
	case "io.max":
		return writeCgroup(filepath.Join(leaf, "io.max"), fmt.Sprintf("%s rbps=%d wbps=%d", c.dev, v*1000000, v*1000000))
	case "io.latency":
		return writeCgroup(filepath.Join(c.leaf, "io.latency"), fmt.Sprintf("%s target=%d", c.dev, v*1000))
	}
	if !costEnabled(filepath.Join(c.root, "io.cost.qos"), c.dev) {
		if err := writeCgroup(filepath.Join(c.root, "io.cost.qos"), c.dev+" enable=1"); err != nil {
			return fmt.Errorf("%s: turning io.cost on for %s (root only): %w", a.name, c.dev, err)
		}
		c.costOn = true // off again at the next reset; one an admin turned on stays on
	}
	return writeCgroup(filepath.Join(leaf, "io.weight"), "default "+strconv.Itoa(v))
}

// reset puts every I/O knob the bench or qos may have set back to the
// kernel's default (Documentation/admin-guide/cgroup-v2.rst, "IO
// Interface Files": "max" removes a limit, "default 100" is the default
// weight; block/blk-iolatency.c reads target=max as no target), and
// io.cost off again if this run turned it on.
func (c *benchCgroup) reset() error {
	if c.dev == "" {
		return nil // no arm sets a knob
	}
	leaves, _ := filepath.Glob(filepath.Join(c.app, "*", "cgroup.procs"))
	var errs []error
	for _, l := range leaves {
		d := filepath.Dir(l)
		errs = append(errs,
			writeIfThere(filepath.Join(d, "io.max"), c.dev+" rbps=max wbps=max riops=max wiops=max"),
			writeIfThere(filepath.Join(d, "io.weight"), "default 100"),
			writeIfThere(filepath.Join(d, "io.latency"), c.dev+" target=max"))
	}
	if c.costOn {
		errs = append(errs, writeCgroup(filepath.Join(c.root, "io.cost.qos"), c.dev+" enable=0"))
		c.costOn = false
	}
	return errors.Join(errs...)
}

// leafOf is the cgroup directory process pid runs in, under offmain-bench.
func (c *benchCgroup) leafOf(pid int) (string, error) {
	own, err := cgroupPath("self")
	if err != nil {
		return "", err
	}
	p, err := cgroupPath(strconv.Itoa(pid))
	if err != nil {
		return "", err
	}
	rel, ok := strings.CutPrefix(p, filepath.Dir(own)+"/")
	if !ok {
		return "", fmt.Errorf("worker %d runs in cgroup %s, outside %s", pid, p, filepath.Dir(own))
	}
	return filepath.Join(c.app, rel), nil
}

// check reads back where a cgroup arm's worker runs and the I/O knobs of
// its leaf and of the bench's, for the header's Applied line; a worker
// in the bench's own leaf is an error (the lever did not apply).
func (c *benchCgroup) check(a arm, worker int) (string, error) {
	leaf, err := c.leafOf(worker)
	if err != nil {
		return "", err
	}
	if leaf == c.leaf {
		return "", fmt.Errorf("arm %s: worker %d runs in the bench's own cgroup %s", a.name, worker, leaf)
	}
	knobs := ioKnobs(leaf)
	if knobs == "" {
		knobs = "no I/O setting"
	}
	if l := ioKnobs(c.leaf); l != "" {
		knobs += "; the bench's " + l
	}
	io := "io controller"
	if !slices.Contains(controllers(filepath.Join(leaf, "cgroup.controllers")), "io") {
		io = "no io controller"
	}
	return fmt.Sprintf("cgroup %s, %s, %s", strings.TrimPrefix(leaf, c.dir+"/"), io, knobs), nil
}

// costEnabled reports whether io.cost is on for disk dev in the root's
// io.cost.qos, whose lines read "MAJ:MIN enable=1 ctrl=auto ..."
// (cgroup-v2.rst, "IO Interface Files").
func costEnabled(qosFile, dev string) bool {
	b, _ := os.ReadFile(qosFile)
	for l := range strings.Lines(string(b)) {
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == dev && slices.Contains(f[1:], "enable=1") {
			return true
		}
	}
	return false
}

// ioKnobs reads the I/O knobs of cgroup dir that differ from the kernel's
// defaults, e.g. "io.max 254:0 rbps=50000000 wbps=max riops=max wiops=max".
func ioKnobs(dir string) string {
	var parts []string
	for _, f := range []string{"io.max", "io.latency", "io.weight"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		for l := range strings.Lines(string(b)) {
			l = strings.TrimSpace(l)
			if l != "" && l != "default 100" {
				parts = append(parts, f+" "+l)
			}
		}
	}
	return strings.Join(parts, ", ")
}

// close puts the I/O knobs back and lets the Group go (every worker has
// been killed by then).
func (c *benchCgroup) close() error {
	return c.reset()
}

// controllers reads a cgroup.controllers or cgroup.subtree_control file.
func controllers(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// writeCgroup writes one line to a cgroup file; the kernel answers each
// write(2) on its own, so it is one call.
func writeCgroup(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if err != nil {
		err = fmt.Errorf("write %q to %s: %w", s, path, err)
	}
	return errors.Join(err, f.Close())
}

// writeIfThere writes s to path if the file exists.
func writeIfThere(path, s string) error {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return writeCgroup(path, s)
}

// cgroupPath is the cgroup v2 path of a process ("self" or a pid), from
// its line "0::/path" in /proc/<pid>/cgroup (cgroups(7)).
func cgroupPath(pid string) (string, error) {
	b, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		return "", err
	}
	for l := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "0::"); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 line in /proc/%s/cgroup", pid)
}

// cgroup2Root is where the cgroup v2 hierarchy is mounted; /sys/fs/cgroup
// if it is not found.
func cgroup2Root() string {
	if dir := mountinfo.Cgroup2(); dir != "" {
		return dir
	}
	return "/sys/fs/cgroup"
}

// diskDev is the "MAJ:MIN" of the disk that holds path: the io controller's
// knobs take a whole disk, not a partition (sysfs-block(5): a partition's
// directory has a "partition" file and sits in its disk's).
func diskDev(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return "", fmt.Errorf("%s is on no block device (%d:%d): %w", path, unix.Major(st.Dev), unix.Minor(st.Dev), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dev"))
	return strings.TrimSpace(string(b)), err
}
