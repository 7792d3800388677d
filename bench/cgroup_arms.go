package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The cgroup arms start the load through a qos.Group whose Cgroup is a
// cgroup delegated to the bench (-cgroup DIR), as an app started in a
// delegated systemd unit would: the bench moves itself into a leaf of
// that cgroup (qos.JoinLeaf), so its probes and the agents' leaves are
// siblings. They differ in what the io controller does:
//
//	cgroup             as delegated: qos's cpu lever and its I/O lever (io.max)
//	cgroup-noio        the io controller withdrawn from the app's cgroup (not delegated): the cpu lever alone
//	cgroup+io.max:N    exploration: the bench sets io.max rbps=wbps=N MB/s on the agents' leaf
//	cgroup+io.latency:N  exploration: io.latency target=N ms on the bench's own leaf
//	cgroup+io.weight:N exploration: io.weight N on the agents' leaf, io.cost on for the disk (root)
//
// The exploration arms put every I/O knob on the scratch disk back to the
// kernel's default first, qos's io.max there too, so each candidate is
// measured alone: they are how qos's I/O lever was chosen
// (bench/README.md, "The I/O lever").
const cgroupArmNames = "cgroup, cgroup-noio, cgroup+io.max:N, cgroup+io.latency:N, cgroup+io.weight:N"

// ioSetup is what a cgroup arm does with the io controller.
type ioSetup struct {
	knob  string // "": as delegated; ioOff; or the knob the bench sets: "io.max", "io.latency", "io.weight"
	value int    // io.max: MB/s; io.latency: ms; io.weight: the weight
}

const ioOff = "off"

func (s ioSetup) String() string {
	switch s.knob {
	case "":
		return "as delegated"
	case ioOff:
		return "io controller withdrawn"
	}
	return s.knob + ":" + strconv.Itoa(s.value)
}

// parseCgroupArm parses the cgroup arms; ok is false for any other name.
func parseCgroupArm(name string) (a arm, ok bool, err error) {
	switch name {
	case "cgroup":
		return arm{name: name, kind: armCgroup}, true, nil
	case "cgroup-noio":
		return arm{name: name, kind: armCgroup, io: ioSetup{knob: ioOff}}, true, nil
	}
	rest, ok := strings.CutPrefix(name, "cgroup+")
	if !ok {
		return arm{}, false, nil
	}
	knob, v, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(v)
	limits := map[string][2]int{"io.max": {1, 1 << 20}, "io.latency": {1, 10000}, "io.weight": {1, 10000}}
	r, known := limits[knob]
	if !known || err != nil || n < r[0] || n > r[1] {
		return arm{}, true, fmt.Errorf("%w: -arms: %q: want cgroup+io.max:MB/s, cgroup+io.latency:ms or cgroup+io.weight:1..10000", errUsage, name)
	}
	return arm{name: "cgroup+" + knob + ":" + strconv.Itoa(n), kind: armCgroup, io: ioSetup{knob: knob, value: n}}, true, nil
}

// setsKnob reports whether the arm sets an I/O knob: the arms that need
// the io controller and a disk.
func (a arm) setsKnob() bool {
	return a.kind == armCgroup && a.io.knob != "" && a.io.knob != ioOff
}

// validateCgroup checks that the cgroup arms have a cgroup to work in.
func (c *config) validateCgroup() error {
	for _, a := range c.arms {
		if a.kind == armCgroup && c.cgroup == "" {
			return fmt.Errorf("%w: -arms: %s needs -cgroup DIR, a cgroup v2 directory delegated to the bench", errUsage, a.name)
		}
	}
	return nil
}
