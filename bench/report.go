package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

// envInfo is what every figure depends on: the machine, how the run was
// made, and what it could not measure (Degraded) and why.
type envInfo struct {
	Kernel      string            `json:"kernel"`
	Cores       int               `json:"cores"`
	GoMaxProcs  int               `json:"gomaxprocs"`         // while the probes ran
	GoDefault   int               `json:"gomaxprocs_default"` // Go's own default here
	Autogroup   string            `json:"autogroup"`
	IOScheduler string            `json:"io_scheduler"`
	Cgroup      string            `json:"cgroup"`
	RlimitNice  string            `json:"rlimit_nice"`
	Go          string            `json:"go"`
	Started     time.Time         `json:"started"`
	Scratch     string            `json:"scratch"`
	ReadMethod  string            `json:"read_method"`
	Duration    string            `json:"duration_per_arm"`
	Rounds      int               `json:"rounds"`
	Seed        uint64            `json:"seed"`
	Orders      [][]string        `json:"round_orders"`
	Arms        []string          `json:"arms"`
	Load        string            `json:"load"`
	Pace        string            `json:"pace"`
	Probes      []string          `json:"probes,omitempty"` // those that ran, if not all (-probes)
	LoadStart   string            `json:"loadavg_start"`
	BusyStart   float64           `json:"cpu_busy_start"` // fraction of all CPUs busy in the second before the run
	Warning     string            `json:"warning,omitempty"`
	Applied     map[string]string `json:"applied"` // arm: what its workers ran at, as checked
	Checked     string            `json:"applied_checked"`
	Degraded    []string          `json:"degraded,omitempty"`
	Marker      string            `json:"worker_marker"`
	Wall        string            `json:"wall"`
}

// optFloat is a float that encodes NaN (no figure) as JSON null.
type optFloat float64

func (f optFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(f), 'g', -1, 64)), nil
}

// comparison is an arm's figure against a base arm's: a ratio for
// quantiles and rates, a difference for fractions; Lo and Hi are the
// bootstrap interval, NaN (null) when not computed.
type comparison struct {
	Base  string   `json:"base"`
	Kind  string   `json:"kind"` // "ratio" or "difference"
	Value optFloat `json:"value"`
	Lo    optFloat `json:"lo"`
	Hi    optFloat `json:"hi"`
}

// excludesNone reports whether the interval excludes "no change".
func (c *comparison) excludesNone() bool {
	none := 0.0
	if c.Kind == "ratio" {
		none = 1
	}
	lo, hi := float64(c.Lo), float64(c.Hi)
	return !math.IsNaN(lo) && (lo > none || hi < none)
}

// row is one metric of one arm.
type row struct {
	IOSched   string      `json:"io_scheduler"` // the disk's scheduler for the run (its active one)
	Probe     string      `json:"probe"`
	Arm       string      `json:"arm"`
	Metric    string      `json:"metric"`
	Kind      metricKind  `json:"kind"`
	N         int         `json:"n"`           // samples, trials, or rounds (rate)
	K         int         `json:"k,omitempty"` // fraction: count
	Value     optFloat    `json:"value"`       // null: too few samples for this quantile
	Quoted    bool        `json:"quoted"`
	Wilson    [2]optFloat `json:"wilson"` // fraction only
	Rounds    []optFloat  `json:"rounds"` // per round; null where a round alone does not support it
	VsDefault *comparison `json:"vs_default,omitempty"`
	VsIdle    *comparison `json:"vs_idle,omitempty"`
	// VsStallOff compares a figure with stall on with the same figure
	// with stall off, in the same arm (the rows of probe "ui+stall").
	VsStallOff *comparison `json:"vs_stall_off,omitempty"`
}

// report is the whole JSON document.
type report struct {
	Env          envInfo       `json:"env"`
	Rows         []row         `json:"rows"`
	StallReports []stallReport `json:"stall_reports"`
}

// stallReport is one report of stall about a ui loop it watched, the
// reports_naming_file rows' raw material.
type stallReport struct {
	Arm        string  `json:"arm"`
	Round      int     `json:"round"` // from 1
	Loop       string  `json:"loop"`  // ui-sync or ui-statefile
	DurationMs float64 `json:"duration_ms"`
	Wait       string  `json:"wait"` // as stall.Report.Wait: "syscall", "sync", "select", …
	Syscall    string  `json:"syscall,omitempty"`
	Path       string  `json:"path,omitempty"`
	NamesFile  bool    `json:"names_file"` // Path is the file the loop saves, or a temporary file of it
	Site       string  `json:"site"`       // the call site: function (file:line)
	Ongoing    bool    `json:"ongoing,omitempty"`
	Dropped    int     `json:"dropped,omitempty"` // reports of the same site left out before it
}

// results holds every sample measured, per arm and round, in milliseconds
// unless a series says otherwise, and stall's reports.
type results struct {
	arms   []string
	rounds int
	series map[string][]map[string][]float64 // arm -> round -> series -> samples
	stall  []stallReport
}

func newResults(arms []arm, rounds int) *results {
	r := &results{rounds: rounds, series: map[string][]map[string][]float64{}}
	for _, a := range arms {
		r.arms = append(r.arms, a.name)
		r.series[a.name] = make([]map[string][]float64, rounds)
		for i := range rounds {
			r.series[a.name][i] = map[string][]float64{}
		}
	}
	return r
}

// add appends samples to the arm's series of one round.
func (r *results) add(armName string, round int, s map[string][]float64) {
	m := r.series[armName][round]
	for k, v := range s {
		m[k] = append(m[k], v...)
	}
}

// rows derives every metric of metricDefs for every arm that has its
// series, with its comparisons; seed makes the bootstrap reproducible.
func (r *results) rows(seed uint64) []row {
	var out []row
	all := map[string]map[string]armStat{} // probe/metric -> arm -> stat
	for _, d := range metricDefs {
		stats := map[string]armStat{}
		all[d.probe+"/"+d.metric] = stats
		for _, a := range r.arms {
			if st, ok := d.derive(r.series[a]); ok {
				stats[a] = st
			}
		}
		for _, a := range r.arms {
			st, ok := stats[a]
			if !ok {
				continue
			}
			rw := d.row(a, st)
			if base, ok := stats["default"]; ok && a != "default" && !d.noCmp && rw.Quoted {
				rw.VsDefault = r.compare(d, a, "default", st, base, seed)
			}
			if base, ok := stats["idle"]; ok && a != "idle" && d.vsIdle && rw.Quoted {
				rw.VsIdle = r.compare(d, a, "idle", st, base, seed)
			}
			if base, ok := all[d.vsOff][a]; ok && rw.Quoted {
				rw.VsStallOff = r.compare(d, a, stallOffBase, st, base, seed)
			}
			out = append(out, rw)
		}
	}
	return out
}

// stallOffBase is the base of a comparison with stall off.
const stallOffBase = "stall off"

// row fills the arm's own figures.
func (d metricDef) row(armName string, st armStat) row {
	rw := row{Probe: d.probe, Arm: armName, Metric: d.metric, Kind: d.kind, N: st.n, K: st.k,
		Value: optFloat(st.stat(ones(len(st.perRound)))), Quoted: true,
		Wilson: [2]optFloat{optFloat(math.NaN()), optFloat(math.NaN())}}
	for _, v := range st.perRound {
		rw.Rounds = append(rw.Rounds, optFloat(v))
	}
	switch d.kind {
	case kindQuantile:
		rw.Quoted = quotable(st.n, d.q)
	case kindFraction:
		lo, hi := wilson(st.k, st.n, wilsonZ)
		rw.Wilson = [2]optFloat{optFloat(lo), optFloat(hi)}
	}
	if !rw.Quoted || math.IsNaN(float64(rw.Value)) {
		rw.Value, rw.Quoted = optFloat(math.NaN()), false
	}
	return rw
}

// compare computes the arm's figure against base's, and its interval when
// there are enough rounds; a base whose quantile n does not support is
// left out.
func (r *results) compare(d metricDef, armName, baseName string, st, base armStat, seed uint64) *comparison {
	if d.kind == kindQuantile && !quotable(base.n, d.q) {
		return nil
	}
	c := &comparison{Base: baseName, Kind: "ratio"}
	cmp := ratio
	if d.kind == kindFraction {
		c.Kind, cmp = "difference", diff
	}
	all := ones(r.rounds)
	c.Value = optFloat(cmp(st.stat(all), base.stat(all)))
	lo, hi, _ := bootstrap(st.stat, base.stat, r.rounds, cmp, bootRNG(seed, d.probe, d.metric, armName, baseName))
	c.Lo, c.Hi = optFloat(lo), optFloat(hi)
	return c
}

// bootRNG gives every comparison its own stream, derived from the seed and
// what is compared, so an interval does not change when other arms or
// metrics are added to the run.
func bootRNG(seed uint64, parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// pooled returns the samples of one series of one arm over all rounds.
func (r *results) pooled(armName, series string) []float64 {
	var out []float64
	for _, m := range r.series[armName] {
		out = append(out, m[series]...)
	}
	return out
}

// writeJSON writes the report (a report, or one with more after it) to path.
func writeJSON(path string, rep any) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}
