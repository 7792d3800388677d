package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHalves(t *testing.T) {
	arms, err := parseArms("idle,agent/io,nice:5/cpu")
	require.NoError(t, err)
	assert.Equal(t, arm{name: "agent/io", kind: armAgent, load: loadIO}, arms[1], "agent/io")
	assert.Equal(t, arm{name: "nice:5/cpu", kind: armNice, nice: 5, load: loadCPU}, arms[2], "nice:5/cpu")
	for _, bad := range []string{"idle/io", "agent/disk", "agent/io/cpu", "nope/cpu"} {
		_, err := parseArms(bad)
		assert.ErrorIs(t, err, errUsage, "parseArms(%q): got %v, want a usage error", bad, err)
	}
}

// TestSplitAddsHalves: -split adds both halves after each tier arm, once,
// and leaves the other arms alone.
func TestSplitAddsHalves(t *testing.T) {
	c, err := parseConfig([]string{"-split", "-arms", "idle,default,agent,background/io,background,setsid"}, io.Discard)
	require.NoError(t, err)
	var names []string
	for _, a := range c.arms {
		names = append(names, a.name)
	}
	assert.Equal(t, []string{"idle", "default", "agent", "agent/cpu", "agent/io", "background/io", "background", "background/cpu", "setsid"}, names)
	assert.Equal(t, 0, c.spinnersFor(arm{kind: armAgent, load: loadIO}), "spinners under the I/O half")
	assert.Equal(t, c.spinners, c.spinnersFor(arm{kind: armAgent, load: loadCPU}), "spinners under the CPU half")
	assert.Equal(t, cpuHalfPace, paceFor(pace{}, arm{load: loadCPU}), "pace under the CPU half")
	assert.Equal(t, pace{write: 5}, paceFor(pace{write: 5}, arm{load: loadIO}), "pace under the I/O half: -pace's")
}

func TestSplitLines(t *testing.T) {
	ratio := func(v float64) *comparison {
		return &comparison{Base: "idle", Kind: "ratio", Value: optFloat(v), Lo: optFloat(v - 0.1), Hi: optFloat(v + 0.1)}
	}
	rows := []row{
		{Arm: "agent", Probe: "burst", Metric: "p95_ms", Value: 20, VsIdle: ratio(2.69)},
		{Arm: "agent/cpu", Probe: "burst", Metric: "p95_ms", Value: 8, VsIdle: ratio(1.11)},
		{Arm: "agent/io", Probe: "burst", Metric: "p95_ms", Value: 22, VsIdle: ratio(2.92)},
		{Arm: "agent", Probe: "frame", Metric: "missed_ticks", Value: 0.31},
		{Arm: "agent/cpu", Probe: "frame", Metric: "missed_ticks", Value: 0.023},
		{Arm: "agent/io", Probe: "frame", Metric: "missed_ticks", Value: 0.28},
		{Arm: "default", Probe: "burst", Metric: "p95_ms", Value: 60, VsIdle: ratio(8)},
	}
	lines := splitLines([]string{"idle", "default", "agent", "agent/cpu", "agent/io"}, rows)
	require.Len(t, lines, 2, "one line per split metric of agent, none for default (no halves)")
	assert.Equal(t, ratio(1.11), lines[0].CPU, "CPU half")
	assert.Equal(t, ratio(2.92), lines[0].IO, "I/O half")
	var b strings.Builder
	require.NoError(t, writeSplit(&b, lines))
	want := "- `agent`: of the burst p95 ratio to idle, ×2.69 [2.59, 2.79]* with the whole load, the CPU load alone gives ×1.11 [1.01, 1.21]*, the I/O load alone ×2.92 [2.82, 3.02]*; the frame loop misses 31.0% of its ticks with the whole load, 2.30% with the CPU load alone, 28.0% with the I/O load alone.\n"
	assert.Contains(t, b.String(), want, "got:\n%s", b.String())
}

// TestHalvesLoad: the header's load line says once what each half runs,
// with -pace's rate or in closed loops, and is empty without halves.
func TestHalvesLoad(t *testing.T) {
	halves := []arm{{name: "agent"}, {name: "agent/io", load: loadIO}}
	assert.Equal(t, "; arms ending /cpu: the 6 spinners, the I/O workers at writers 1 MB/s, readers 1 MB/s, storms 10 files/s; "+
		"arms ending /io: no spinners, the I/O workers in closed loops (as fast as their tier lets them)",
		halvesLoad(halves, 6, pace{}))
	assert.Equal(t, "; arms ending /cpu: the 6 spinners, the I/O workers at writers 1 MB/s, readers 1 MB/s, storms 10 files/s; "+
		"arms ending /io: no spinners, the I/O workers at writers 20 MB/s, readers closed loop, storms 2000 files/s",
		halvesLoad(halves, 6, pace{write: 20e6, meta: 2000}))
	assert.Empty(t, halvesLoad([]arm{{name: "agent"}}, 6, pace{}), "no halves")
}
