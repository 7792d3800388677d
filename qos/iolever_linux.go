//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
)

// The I/O lever: where a Group's Cgroup has the io controller, each tier's
// leaf gets an io.max that holds what its commands read and write to a
// quarter of what the kernel's I/O cost model says each disk can do: the
// model it holds for the disk where it has one (figures written for it
// by systemd-iocost or an admin), else its class's. blk-throttle,
// which serves io.max, works on any I/O scheduler
// (Documentation/admin-guide/cgroup-v2.rst, "IO Interface Files"), so the
// lever needs neither BFQ nor root; the memory controller goes with it,
// for writeback is charged to a cgroup only where both are enabled
// (cgroup-v2.rst, "Writeback"). Without the io controller nothing changes
// and Inspect says what is missing. DESIGN.md ("The I/O lever") has why
// io.max and not io.latency or io.weight; bench/README.md the figures.

// ioModel is one disk class of the kernel's linear I/O cost model
// (block/blk-iocost.c, autop[]): sequential bytes per second and random
// 4 KiB I/Os per second, reads and writes.
type ioModel struct {
	rbps, wbps, riops, wiops uint64
}

var (
	modelHDD    = ioModel{174019176, 178075866, 370, 378}    // AUTOP_HDD: a rotational disk
	modelSSDQD1 = ioModel{245855193, 141365009, 6946, 26796} // AUTOP_SSD_QD1: an SSD with a queue depth of 1
	modelSSD    = ioModel{488636629, 427891549, 8518, 21940} // AUTOP_SSD_DFL: any other
)

// agentIOShare is the part of a disk's model a tier's leaf may use: a
// quarter, picked with the bench (bench/README.md, "The I/O lever").
const agentIOShare = 4

// sysBlock is where the disks are listed (sysfs-block(5)).
const sysBlock = "/sys/block"

// costModelFile is the root cgroup's list of the cost model blk-iocost
// holds for each disk it has been set up for (cgroup-v2.rst, "IO
// Interface Files", io.cost.model), under the cgroup2 mount.
const costModelFile = "io.cost.model"

// diskLines returns the io.max line of each of this machine's disks (see
// ioMaxLines), from the cost model the kernel holds for the disk where it
// has one.
func diskLines() []string {
	models := map[string]ioModel{}
	if mnt := mountinfo.Cgroup2(); mnt != "" {
		b, _ := os.ReadFile(filepath.Join(mnt, costModelFile))
		models = parseCostModels(string(b))
	}
	return ioMaxLines(sysBlock, models)
}

// parseCostModels parses io.cost.model, "8:16 ctrl=user model=linear
// rbps=... rseqiops=... rrandiops=... wbps=... wseqiops=... wrandiops=..."
// a line (block/blk-iocost.c, ioc_cost_model_prfill), into each disk's
// model by device number. A disk is listed once blk-iocost was set up for
// it. With ctrl=user its figures were written for it: systemd-iocost(1)
// writes those its hwdb has for the disk's make and model
// (src/iocost/iocost.c in systemd), an admin perhaps resctl-bench's
// measurements; with ctrl=auto they are blk-iocost's own pick, its
// class's defaults or, for an SSD it found faster than those, the next
// set up (ioc_autop_idx). A line without the four figures io.max takes,
// or with one at 0, is left out.
func parseCostModels(s string) map[string]ioModel {
	models := map[string]ioModel{}
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		kv := map[string]uint64{}
		for _, p := range f[1:] {
			k, v, _ := strings.Cut(p, "=")
			if n, err := strconv.ParseUint(v, 10, 64); err == nil && n > 0 {
				kv[k] = n
			}
		}
		m := ioModel{rbps: kv["rbps"], wbps: kv["wbps"], riops: kv["rrandiops"], wiops: kv["wrandiops"]}
		if m.rbps > 0 && m.wbps > 0 && m.riops > 0 && m.wiops > 0 {
			models[f[0]] = m
		}
	}
	return models
}

// ioMaxLines returns the io.max line of each disk listed in block that
// has a device behind it (loop, md and device-mapper disks have none, and
// the I/O they pass on reaches the disk below them; zram has none and
// keeps its data in memory), e.g. "254:0 rbps=43504794
// wbps=44518966 riops=92 wiops=94": agentIOShare of the disk's model in
// models, by device number, else of its class's. The class is the one
// blk-iocost starts a disk in (ioc_autop_idx): rotational, else an SSD
// with a queue depth of 1 (blk_queue_depth: the driver's queue depth,
// else nr_requests), else any SSD. blk-throttle takes no value below 2
// (tg_set_limit).
func ioMaxLines(block string, models map[string]ioModel) []string {
	devs, _ := filepath.Glob(filepath.Join(block, "*", "device"))
	var lines []string
	for _, d := range devs {
		dir := filepath.Dir(d)
		b, err := os.ReadFile(filepath.Join(dir, "dev"))
		if err != nil {
			continue
		}
		dev := strings.TrimSpace(string(b))
		depth := readTrim(filepath.Join(d, "queue_depth"))
		if depth == "" || depth == "0" {
			depth = readTrim(filepath.Join(dir, "queue", "nr_requests"))
		}
		m, ok := models[dev]
		switch {
		case ok:
		case readTrim(filepath.Join(dir, "queue", "rotational")) == "1":
			m = modelHDD
		case depth == "1":
			m = modelSSDQD1
		default:
			m = modelSSD
		}
		lines = append(lines, fmt.Sprintf("%s rbps=%d wbps=%d riops=%d wiops=%d", dev,
			max(2, m.rbps/agentIOShare), max(2, m.wbps/agentIOShare), max(2, m.riops/agentIOShare), max(2, m.wiops/agentIOShare)))
	}
	slices.Sort(lines)
	return lines
}

// leverError is the failure to give a tier's leaf the I/O lever, which
// the command starts without. It is the leaf's, not the command's, so a
// Group tells it once for each run of the same failure (Group.tellLever);
// a holder sends it as helperStatus.Lever.
type leverError struct{ err error }

func (e *leverError) Error() string { return e.err.Error() }
func (e *leverError) Unwrap() error { return e.err }

// prepareIO gives leaf, a tier's leaf under dir, the I/O lever when dir
// has the io controller: io and memory enabled for dir's children, then
// io.max for each disk. Without it, it does nothing. A line the leaf
// already has is not written again: each write starts blk-throttle's
// accounting afresh (tg_conf_updated), which a burst of Starts would turn
// into I/O past the limit. Its error does not stop a Start: the command
// runs without the lever, and Inspect says so.
func prepareIO(dir, leaf string) error {
	have := strings.Fields(readTrim(filepath.Join(dir, "cgroup.controllers")))
	if !slices.Contains(have, "io") {
		return nil
	}
	on := strings.Fields(readTrim(filepath.Join(dir, "cgroup.subtree_control")))
	for _, c := range []string{"memory", "io"} {
		if slices.Contains(have, c) && !slices.Contains(on, c) {
			if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+"+c); err != nil {
				return fmt.Errorf("qos: cgroup %s: the I/O lever: enabling the %s controller for its children: %w", dir, c, err)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(leaf, "io.max"))
	if err != nil {
		return nil // a kernel without blk-throttle (CONFIG_BLK_DEV_THROTTLING): Inspect says so
	}
	set := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range diskLines() {
		if slices.Contains(set, l) {
			continue
		}
		// A disk gone since it was listed, or one with no queue of its
		// own (a hidden NVMe path), answers ENODEV: it has no I/O to hold.
		if err := writeFile(filepath.Join(leaf, "io.max"), l); err != nil && !errors.Is(err, unix.ENODEV) {
			return fmt.Errorf("qos: cgroup %s: the I/O lever: io.max %q: %w", leaf, l, err)
		}
	}
	return nil
}

// readTrim reads a small sysfs or cgroup file; "" if it cannot.
func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// cgroupLevers fills a's Cgroup, Levers and Missing for process pid: what
// qos's cgroup lever applies to it, and, for a process below the app's
// tier, which part of the lever it goes without and how a user gets it.
func cgroupLevers(a *Applied, pid int, lowered bool) {
	if mnt, rel := cgroupOf(pid); rel != "" {
		a.Cgroup = filepath.Join(mnt, rel)
	}
	readLevers(a, lowered)
}

// readLevers fills a's Levers and Missing from the cgroup directory
// a.Cgroup ("" for none).
func readLevers(a *Applied, lowered bool) {
	leaf := tierLeaf(a.Cgroup)
	if leaf == "" {
		if lowered {
			a.Missing = append(a.Missing, "cgroup lever: in no tier cgroup of a Group's Cgroup; run the app in a "+
				"delegated cgroup (systemd-run --user --scope -p Delegate=yes APP), call qos.JoinLeaf there "+
				"and set Group.Cgroup")
		}
		return
	}
	for _, k := range []string{"cpu.weight.nice", "cpu.idle"} {
		if v := readTrim(filepath.Join(leaf, k)); v != "" && v != "0" {
			a.Levers = append(a.Levers, k+" "+v)
		}
	}
	limited := false
	for l := range strings.Lines(readTrim(filepath.Join(leaf, "io.max"))) {
		if l = strings.TrimSpace(l); limits(l) {
			a.Levers = append(a.Levers, "io.max "+l)
			limited = true
		}
	}
	if !lowered {
		return
	}
	dir := filepath.Dir(leaf)
	have := strings.Fields(readTrim(filepath.Join(dir, "cgroup.controllers")))
	on := strings.Fields(readTrim(filepath.Join(dir, "cgroup.subtree_control")))
	_, statErr := os.Stat(filepath.Join(leaf, "io.max"))
	switch {
	case !slices.Contains(have, "io"):
		a.Missing = append(a.Missing, fmt.Sprintf("I/O lever: the io controller is not delegated to %s "+
			"(cgroup.controllers: %q); systemd (252 and later) delegates pids, memory and cpu to a user's "+
			"manager (user@.service: Delegate=pids memory cpu): an admin adds io in "+
			"/etc/systemd/system/user@.service.d/delegate.conf with the lines [Service] and "+
			"Delegate=pids memory cpu io, runs systemctl daemon-reload, and the user logs out of "+
			"every session (or reboots)", dir, strings.Join(have, " ")))
	case !slices.Contains(on, "io"):
		a.Missing = append(a.Missing, "I/O lever: the io controller is not enabled for the children of "+dir+
			" (the Group reported why, through OnError or the log)")
	case statErr != nil:
		a.Missing = append(a.Missing, "I/O lever: this kernel has no io.max (CONFIG_BLK_DEV_THROTTLING)")
	case !limited:
		a.Missing = append(a.Missing, "I/O lever: io.max is not set in "+leaf+
			" (no disk with a device took a limit, or the Group reported why, through OnError or the log)")
	}
	if slices.Contains(have, "io") && !slices.Contains(have, "memory") {
		a.Missing = append(a.Missing, fmt.Sprintf("I/O lever: the memory controller is not delegated to %s, so "+
			"the agents' writeback is not held (cgroup-v2.rst, \"Writeback\")", dir))
	}
}

// limits reports whether an io.max line, "8:0 rbps=43504794 wbps=max
// riops=max wiops=max", sets a limit other than "max".
func limits(line string) bool {
	_, rest, _ := strings.Cut(line, " ")
	for _, f := range strings.Fields(rest) {
		if _, v, ok := strings.Cut(f, "="); ok && v != "max" {
			return true
		}
	}
	return false
}

// tierLeaf returns the tier leaf (offmain-nice<N> or offmain-idle) that
// holds cgroup directory dir, or "".
func tierLeaf(dir string) string {
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		b := filepath.Base(d)
		if n, ok := strings.CutPrefix(b, "offmain-nice"); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return d
			}
		}
		if b == "offmain-idle" {
			return d
		}
	}
	return ""
}

// cgroupOf returns where the cgroup v2 hierarchy is mounted and process
// pid's path in it ("0::<path>" in /proc/<pid>/cgroup, cgroups(7)); rel is
// "" when the process is in its root or none, or the hierarchy is not
// mounted here.
func cgroupOf(pid int) (mnt, rel string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", ""
	}
	for l := range strings.Lines(string(b)) {
		// A process outside the reader's cgroup namespace shows a path
		// that climbs out of it ("/../..", cgroup_namespaces(7)).
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "0::"); ok && p != "/" && !slices.Contains(strings.Split(p, "/"), "..") {
			rel = p
		}
	}
	if mnt = mountinfo.Cgroup2(); mnt == "" || rel == "" {
		return "", ""
	}
	if _, err := os.Stat(filepath.Join(mnt, rel)); err != nil {
		return "", "" // a cgroup namespace or a mount of a subtree: the path is not below mnt
	}
	return mnt, rel
}
