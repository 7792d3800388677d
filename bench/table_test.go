package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tableEnv(rounds int) envInfo {
	return envInfo{Kernel: "6.18.44", Cores: 2, GoMaxProcs: 12, GoDefault: 2, Autogroup: "on", IOScheduler: "mq-deadline (vda)",
		Cgroup: "v1, cpu controller at /", RlimitNice: "0 (hard 0)", Go: "go1.26",
		Started: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Duration: "8s", Rounds: rounds, Seed: 3,
		Orders: [][]string{{"agent", "idle", "default"}}, Arms: []string{"idle", "default", "agent"},
		Applied: map[string]string{"agent": "nice 5"}, Checked: "all checked", Degraded: []string{"PSI: no such file"}}
}

func nan() optFloat { return optFloat(math.NaN()) }

func TestRenderTable(t *testing.T) {
	rows := []row{
		{Probe: "burst", Arm: "idle", Metric: "p95_ms", Kind: kindQuantile, N: 900, Value: 5.04, Quoted: true,
			Rounds: []optFloat{5, 5.5, 4.9, 5.1, 5.2}},
		{Probe: "burst", Arm: "default", Metric: "p95_ms", Kind: kindQuantile, N: 880, Value: 20, Quoted: true,
			Rounds: []optFloat{19, 22, 20, 18, 21}, VsIdle: &comparison{Base: "idle", Kind: "ratio", Value: 3.97, Lo: 3.5, Hi: 4.4}},
		{Probe: "burst", Arm: "agent", Metric: "p95_ms", Kind: kindQuantile, N: 20, Value: nan()},
		{Probe: "save-sync", Arm: "default", Metric: "over_16.7ms", Kind: kindFraction, K: 5, N: 100, Value: 0.05,
			Wilson: [2]optFloat{0.0215, 0.1118}},
		{Probe: "save-sync", Arm: "agent", Metric: "over_16.7ms", Kind: kindFraction, K: 1, N: 100, Value: 0.01,
			Wilson: [2]optFloat{0.0018, 0.0545}, VsDefault: &comparison{Base: "default", Kind: "difference", Value: -0.04, Lo: -0.08, Hi: 0.01}},
		{Probe: "agents", Arm: "agent", Metric: "write_MB_per_s", Kind: kindRate, N: 5, Value: 47,
			Rounds: []optFloat{40, 50, 47, 45, 60}, VsDefault: &comparison{Base: "default", Kind: "ratio", Value: 0.2, Lo: 0.1, Hi: 0.3}},
	}
	var b strings.Builder
	require.NoError(t, renderTable(&b, tableEnv(5), rows))
	out := b.String()
	for _, want := range []string{
		"GOMAXPROCS 12 while the probes ran (Go's default here: 2)",
		"shuffled order each round (seed 3: agent,idle,default)",
		"- Not measured: PSI: no such file\n",
		"- Applied (all checked): `agent`: nice 5;",
		"| probe | metric | idle | default | agent |\n|---|---|---:|---:|---:|\n",
		"| burst | p95_ms | 5.04 (4.90–5.50) n=900 | 20.0 (18.0–22.0) n=880 | – n=20 |\n",
		"|  | vs idle |  | ×3.97 [3.50, 4.40]* |  |\n",
		"| save-sync | over_16.7ms | – | 5/100 5.00% [2.15%, 11.2%] | 1/100 1.00% [0.18%, 5.45%] |\n",
		"|  | vs default |  |  | -4.0 pts [-8.0, +1.0] |\n",
		"| agents | write_MB_per_s | – | – | 47.0 (40.0–60.0) |\n",
		"|  | vs default |  |  | -80% [-90, -70]* |\n",
	} {
		assert.Contains(t, out, want, "got table:\n%s\nwant it to contain %q", out, want)
	}
	assert.NotContains(t, out, "Intervals not computed", "5 rounds: intervals are computed")
	assert.NotContains(t, out, "Warning", "got a warning for a quiet machine")
}

// TestRenderTableTooFewRounds checks that a run of fewer rounds than the
// intervals need says so, and that its changes carry no interval.
func TestRenderTableTooFewRounds(t *testing.T) {
	rows := []row{
		{Probe: "burst", Arm: "default", Metric: "p50_ms", Kind: kindQuantile, N: 180, Value: 20, Quoted: true},
		{Probe: "burst", Arm: "agent", Metric: "p50_ms", Kind: kindQuantile, N: 180, Value: 10, Quoted: true,
			VsDefault: &comparison{Base: "default", Kind: "ratio", Value: 0.5, Lo: nan(), Hi: nan()}},
	}
	var b strings.Builder
	require.NoError(t, renderTable(&b, tableEnv(1), rows))
	out := b.String()
	assert.Contains(t, out, "**Intervals not computed: 1 round(s), they need at least 5.**", "header")
	assert.Contains(t, out, "| -50% (no CI) |", "change without interval")
}

func TestRenderTableWarnsWhenBusy(t *testing.T) {
	env := tableEnv(5)
	env.Warning = "the machine was busy before the run"
	var b strings.Builder
	require.NoError(t, renderTable(&b, env, nil))
	assert.Contains(t, b.String(), "> **Warning:** the machine was busy before the run\n", "got no warning line")
}

func TestNum(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{1234.5, "1234"}, {19.66, "19.7"}, {5.0, "5.00"}, {0.4567, "0.457"}, {math.NaN(), "–"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, num(tt.v), "num(%v)", tt.v)
	}
}

func TestRenderTableStallOff(t *testing.T) {
	rows := []row{
		{Probe: "ui", Arm: "agent", Metric: "late_p95_ms_sync", Kind: kindQuantile, N: 2400, Value: 2, Quoted: true},
		{Probe: "ui+stall", Arm: "agent", Metric: "late_p95_ms_sync", Kind: kindQuantile, N: 2400, Value: 2.2, Quoted: true,
			VsStallOff: &comparison{Base: stallOffBase, Kind: "ratio", Value: 1.1, Lo: 0.9, Hi: 1.3}},
		{Probe: "ui+stall", Arm: "agent", Metric: "reports_naming_file_sync", Kind: kindFraction, K: 9, N: 10, Value: 0.9,
			Wilson: [2]optFloat{0.596, 0.982}},
	}
	var b strings.Builder
	require.NoError(t, renderTable(&b, tableEnv(5), rows))
	out := b.String()
	assert.Contains(t, out, "| ui+stall | late_p95_ms_sync | – | – | 2.20 n=2400 |\n|  | vs stall off |  |  | +10% [-10, +30] |\n", "got table:\n%s", out)
	assert.Contains(t, out, "| ui+stall | reports_naming_file_sync | – | – | 9/10 90.0% [59.6%, 98.2%] |\n", "got table:\n%s", out)
}
