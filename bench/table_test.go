package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tableEnv() envInfo {
	return envInfo{Kernel: "6.18.44", Cores: 2, Autogroup: "on", IOScheduler: "mq-deadline (vda)",
		Cgroup: "v1, cpu controller at /", RlimitNice: "0 (hard 0)", Go: "go1.26",
		Started: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Duration: "10s", Rounds: 2,
		Arms: []string{"idle", "default", "agent"}, Applied: map[string]string{"agent": "nice 5"}}
}

func TestRenderTable(t *testing.T) {
	rows := []row{
		{Probe: "burst", Arm: "idle", Metric: "p99_ms", Value: 5.04, Agg: aggMedian},
		{Probe: "burst", Arm: "default", Metric: "p99_ms", Value: 20, Agg: aggMedian},
		{Probe: "burst", Arm: "agent", Metric: "p99_ms", Value: 8.1, Agg: aggMedian},
		{Probe: "ui", Arm: "default", Metric: "over_frame_sync", Value: 44, Agg: aggSum},
		{Probe: "ui", Arm: "agent", Metric: "over_frame_sync", Value: 0, Agg: aggSum},
		{Probe: "agent-cost", Arm: "default", Metric: "job_ms", Value: 612.4, Agg: aggMedian},
		{Probe: "agent-cost", Arm: "agent", Metric: "job_ms", Value: 0.0123, Agg: aggMedian},
	}
	var b strings.Builder
	require.NoError(t, renderTable(&b, tableEnv(), rows))
	out := b.String()
	for _, want := range []string{
		"kernel 6.18.44, 2 cores, autogroup on, I/O scheduler mq-deadline (vda), cgroup v1, cpu controller at /, RLIMIT_NICE 0 (hard 0)",
		"medians over the 2 round(s); counts (over_frame, skipped_ticks, saves) are sums",
		"`agent`: nice 5;",
		"| probe | metric | idle | default | agent |\n|---|---|---:|---:|---:|\n",
		"| burst | p99_ms | 5.04 (-75%) | 20.0 | 8.10 (-60%) |\n",
		"| ui | over_frame_sync | – | 44 | 0 (-100%) |\n",
		"| agent-cost | job_ms | – | 612 | 0.0123 (-100%) |\n",
	} {
		assert.Contains(t, out, want, "got table:\n%s\nwant it to contain %q", out, want)
	}
	assert.NotContains(t, out, "Warning", "got a warning for a quiet machine")
}

func TestRenderTableWarnsWhenBusy(t *testing.T) {
	env := tableEnv()
	env.Warning = "the machine was busy before the run"
	var b strings.Builder
	require.NoError(t, renderTable(&b, env, nil))
	assert.Contains(t, b.String(), "> **Warning:** the machine was busy before the run\n", "got no warning line")
}

func TestChange(t *testing.T) {
	tests := []struct {
		v, base float64
		want    string
	}{
		{8.1, 20, " (-60%)"},
		{30, 20, " (+50%)"},
		{20.04, 20, " (0%)"},
		{3, 0, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, change(tt.v, tt.base), "change(%v, %v)", tt.v, tt.base)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		r    row
		want string
	}{
		{row{Value: 1234.5, Agg: aggMedian}, "1234"},
		{row{Value: 19.66, Agg: aggMedian}, "19.7"},
		{row{Value: 5.0, Agg: aggMedian}, "5.00"},
		{row{Value: 0.4567, Agg: aggMedian}, "0.457"},
		{row{Value: 12, Agg: aggSum}, "12"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, formatValue(tt.r), "formatValue(%+v)", tt.r)
	}
}
