//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplitEndToEnd runs a short -split run and checks that the halves ran
// as their names say (no spinners under the I/O half, the I/O workers
// paced to almost nothing under the CPU half), that their rows and the
// split's lines are in the JSON, and that the table's summary reads them.
func TestSplitEndToEnd(t *testing.T) {
	parent := t.TempDir()
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-quick", "-quiet", "-split", "-arms", "idle,agent", "-duration", "3s", "-spinners", "2",
		"-dir", parent, "-json", jsonPath}, &stdout, &stderr)
	require.NoError(t, err, "bench -split failed; stderr:\n%s", stderr.String())

	var rep splitReport
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, []string{"idle", "agent", "agent/cpu", "agent/io"}, rep.Env.Arms, "arms in the JSON")
	rows := map[string]row{}
	for _, r := range rep.Rows {
		rows[r.Arm+" "+r.Probe+"/"+r.Metric] = r
	}
	for _, a := range rep.Env.Arms {
		for _, m := range requiredMetrics {
			_, ok := rows[a+" "+m]
			assert.True(t, ok, "got no row %s for arm %s, want one", m, a)
		}
	}
	assert.Zero(t, float64(rows["agent/io agents/spin_Miter_per_s"].Value), "spinners' work under the I/O half")
	assert.Positive(t, float64(rows["agent/io agents/write_MB_per_s"].Value), "writers' work under the I/O half")
	assert.Positive(t, float64(rows["agent/cpu agents/spin_Miter_per_s"].Value), "spinners' work under the CPU half")
	// Two writers offered 1 MB/s each; a writer that fell behind catches up
	// in one burst, so allow some slack, far below a closed loop's rate.
	assert.Less(t, float64(rows["agent/cpu agents/write_MB_per_s"].Value), 8.0, "writers' rate under the CPU half, MB/s")

	require.Len(t, rep.Split, 2, "split lines: burst p95 and frame missed ticks of agent")
	for _, l := range rep.Split {
		assert.Equal(t, "agent", l.Arm, "split line's arm")
		for i, v := range l.Value {
			assert.False(t, isNaN(v), "%s/%s: figure %d not quoted: %v", l.Probe, l.Metric, i, l.Value)
		}
	}
	burst := rep.Split[0]
	require.Equal(t, "burst/p95_ms", burst.Probe+"/"+burst.Metric, "first split line")
	for name, c := range map[string]*comparison{"whole": burst.Whole, "cpu": burst.CPU, "io": burst.IO} {
		if assert.NotNil(t, c, "burst p95 vs idle, %s", name) {
			assert.Equal(t, "idle", c.Base, "burst p95 %s: base", name)
		}
	}
	assert.Contains(t, stdout.String(), "| probe | metric | idle | agent | agent/cpu | agent/io |", "table header")
	assert.Contains(t, stdout.String(), "- `agent`: of the burst p95 ratio to idle, ×", "split summary")
	assert.Contains(t, stdout.String(), "arms ending /io: no spinners", "load line")
}

func isNaN(f optFloat) bool { return f != f }
