package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// The split says where a tier's remaining gap to idle comes from. The load
// has two halves: the CPU spinners, which the tiers' CPU priority answers,
// and the I/O workers, whose I/O also makes the kernel work outside the
// agents' scheduling class (writeback, block completions, page-cache
// reclaim). An arm "X/cpu" runs arm X under the spinners alone, its I/O
// workers paced to almost nothing; "X/io" runs X under the I/O workers
// alone, as -pace says (closed loops by default). -split adds both halves
// of every tier arm, and the table is followed by one line per tier arm:
// of the burst p95 ratio to idle, what each half alone gives.
const (
	loadCPU = "cpu"
	loadIO  = "io"
)

// cpuHalfPace is the I/O workers' offered rate under the CPU half: they
// keep running, so the arm has the same processes, but do almost no I/O.
var cpuHalfPace = pace{write: 1e6, read: 1e6, meta: 10}

// splitName cuts "agent/io" into "agent" and "io".
func splitName(name string) (base, load string, ok bool) {
	base, load, ok = strings.Cut(name, "/")
	return base, load, ok
}

// parseHalf parses the arm base under one half of the load.
func parseHalf(base, load string) (arm, error) {
	a, err := parseArm(base)
	switch {
	case err != nil:
		return a, err
	case load != loadCPU && load != loadIO:
		return arm{}, fmt.Errorf("%w: -arms: %q: the half of the load after / is %s or %s", errUsage, base+"/"+load, loadCPU, loadIO)
	case !a.hasLoad() || a.load != "":
		return arm{}, fmt.Errorf("%w: -arms: %q: only an arm with the whole load has halves", errUsage, base+"/"+load)
	}
	a.name, a.load = base+"/"+load, load
	return a, nil
}

// tier reports whether the arm lowers its load through qos: the arms the
// split is for.
func (a arm) tier() bool {
	return a.load == "" && (a.kind == armAgent || a.kind == armBackground || a.kind == armCgroup)
}

// withHalves adds, after each tier arm, its two halves, unless -arms named
// them already.
func withHalves(arms []arm) []arm {
	var out []arm
	for _, a := range arms {
		out = append(out, a)
		if !a.tier() {
			continue
		}
		for _, load := range []string{loadCPU, loadIO} {
			name := a.name + "/" + load
			if !slices.ContainsFunc(arms, func(b arm) bool { return b.name == name }) {
				h := a
				h.name, h.load = name, load
				out = append(out, h)
			}
		}
	}
	return out
}

// spinnersFor is how many spinners arm a runs: none under the I/O half.
func (c *config) spinnersFor(a arm) int {
	if a.load == loadIO {
		return 0
	}
	return c.spinners
}

// paceFor is the I/O workers' offered rate in arm a.
func paceFor(p pace, a arm) pace {
	if a.load == loadCPU {
		return cpuHalfPace
	}
	return p
}

// halvesLoad describes the halves for the header's load line.
func halvesLoad(arms []arm, spinners int, p pace) string {
	if !slices.ContainsFunc(arms, func(a arm) bool { return a.load != "" }) {
		return ""
	}
	io := "the I/O workers at " + strings.TrimPrefix(p.String(), "offered rate per worker: ")
	if p == (pace{}) {
		io = "the " + p.String()
	}
	return fmt.Sprintf("; arms ending /%s: the %d spinners, the I/O workers at %s; arms ending /%s: no spinners, %s",
		loadCPU, spinners, strings.TrimPrefix(cpuHalfPace.String(), "offered rate per worker: "), loadIO, io)
}

// splitLine is one tier arm's gap to idle, with the whole load and under
// each half alone, for one metric: its ratio to idle (a quantile) or its
// difference from idle (a count), each with the bootstrap interval the
// table prints. A half that did not run, or whose figure is not quoted,
// is nil.
type splitLine struct {
	Arm    string      `json:"arm"`
	Probe  string      `json:"probe"`
	Metric string      `json:"metric"`
	Whole  *comparison `json:"whole_load"`
	CPU    *comparison `json:"cpu_load_alone"`
	IO     *comparison `json:"io_load_alone"`
	// Value is the figure itself (not against idle) in each case, in the
	// same order: whole, CPU alone, I/O alone; null where not quoted.
	Value [3]optFloat `json:"value"`
}

// splitMetrics are the figures the split reads: the goal's (a burst's p95
// against idle) and the frame loop's missed ticks.
var splitMetrics = []string{"burst/p95_ms", "frame/missed_ticks"}

// splitLines collects, for every arm that ran with at least one half, its
// split of each splitMetrics figure, from the rows.
func splitLines(arms []string, rows []row) []splitLine {
	byKey := map[string]row{}
	for _, r := range rows {
		byKey[r.Arm+" "+r.Probe+"/"+r.Metric] = r
	}
	var out []splitLine
	for _, a := range arms {
		if strings.Contains(a, "/") || !slices.ContainsFunc(arms, func(b string) bool { return strings.HasPrefix(b, a+"/") }) {
			continue
		}
		for _, m := range splitMetrics {
			probe, metric, _ := strings.Cut(m, "/")
			l := splitLine{Arm: a, Probe: probe, Metric: metric}
			for i, name := range []string{a, a + "/" + loadCPU, a + "/" + loadIO} {
				r, ok := byKey[name+" "+m]
				l.Value[i] = optFloat(math.NaN())
				if !ok {
					continue
				}
				l.Value[i] = r.Value
				switch i {
				case 0:
					l.Whole = r.VsIdle
				case 1:
					l.CPU = r.VsIdle
				default:
					l.IO = r.VsIdle
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// writeSplit writes, after the table, what each half of the load alone
// gives of each tier arm's gap to idle.
func writeSplit(w io.Writer, lines []splitLine) error {
	if len(lines) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\n### Split: what each half of the load gives alone\n\n")
	for _, l := range lines {
		if l.Probe+"/"+l.Metric != splitMetrics[0] {
			continue
		}
		fmt.Fprintf(&b, "- `%s`: of the burst p95 ratio to idle, %s with the whole load, the CPU load alone gives %s, the I/O load alone %s",
			l.Arm, vsIdleText(l.Whole), vsIdleText(l.CPU), vsIdleText(l.IO))
		for _, f := range lines {
			if f.Arm == l.Arm && f.Probe+"/"+f.Metric == splitMetrics[1] {
				fmt.Fprintf(&b, "; the frame loop misses %s of its ticks with the whole load, %s with the CPU load alone, %s with the I/O load alone",
					pctOf(float64(f.Value[0])), pctOf(float64(f.Value[1])), pctOf(float64(f.Value[2])))
			}
		}
		b.WriteString(".\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// vsIdleText prints a ratio to idle with its interval, as the table does.
func vsIdleText(c *comparison) string {
	if c == nil {
		return "– (not measured or not quoted)"
	}
	return cmpCell(map[string]row{"x": {VsIdle: c}}, "x", "idle")
}

// splitReport is the JSON document with the split after the rows.
type splitReport struct {
	report
	Split []splitLine `json:"split,omitempty"`
}
