package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"
)

// envInfo is what every figure depends on. Issue 7 asks for kernel, cores,
// autogroup, the I/O scheduler of the disk under the scratch folder, the
// cgroup layout and RLIMIT_NICE; the rest says how the run was made.
type envInfo struct {
	Kernel      string            `json:"kernel"`
	Cores       int               `json:"cores"`
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
	Arms        []string          `json:"arms"`
	Load        string            `json:"load"`
	LoadStart   string            `json:"loadavg_start"`
	BusyStart   float64           `json:"cpu_busy_start"` // fraction of all CPUs busy in the second before the run
	Warning     string            `json:"warning,omitempty"`
	Applied     map[string]string `json:"applied"` // arm: what one spinner of the arm really ran at
	Marker      string            `json:"worker_marker"`
	Wall        string            `json:"wall"`
}

// row is one figure of the JSON output: issue 7's schema plus how the rounds
// were combined.
type row struct {
	Probe  string    `json:"probe"`
	Arm    string    `json:"arm"`
	Metric string    `json:"metric"`
	Value  float64   `json:"value"`
	Rounds []float64 `json:"rounds"`
	Agg    aggregate `json:"agg"`
}

// report is the whole JSON document.
type report struct {
	Env  envInfo `json:"env"`
	Rows []row   `json:"rows"`
}

// results holds every sample measured, per arm and round, in milliseconds
// (loadavg in its own unit).
type results struct {
	arms   []string
	series map[string][]map[string][]float64 // arm -> round -> series -> samples
}

func newResults(arms []arm, rounds int) *results {
	r := &results{series: map[string][]map[string][]float64{}}
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

// rows derives every metric of metricDefs for every arm that has its series.
func (r *results) rows() []row {
	var out []row
	for _, d := range metricDefs {
		for _, a := range r.arms {
			var vals []float64
			for _, m := range r.series[a] {
				xs, ok := m[d.series]
				if v := d.value(xs); ok && !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				continue
			}
			out = append(out, row{Probe: d.probe, Arm: a, Metric: d.metric,
				Value: d.agg.combine(vals), Rounds: vals, Agg: d.agg})
		}
	}
	return out
}

// pooled returns the samples of one series of one arm over all rounds.
func (r *results) pooled(armName, series string) []float64 {
	var out []float64
	for _, m := range r.series[armName] {
		out = append(out, m[series]...)
	}
	return out
}

// writeJSON writes the report to path.
func writeJSON(path string, rep report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("json: %w", err)
	}
	return nil
}
