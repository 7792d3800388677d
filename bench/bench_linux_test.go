package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickEndToEnd runs bench -quick in this process (its workers are this
// test binary, dispatched by TestMain) and checks the JSON has every
// required row for every arm, the SVG exists, and that the scratch folder
// and every worker process are gone afterwards.
func TestQuickEndToEnd(t *testing.T) {
	parent := t.TempDir()
	out := t.TempDir()
	jsonPath, svgPath := filepath.Join(out, "bench out.json"), filepath.Join(out, "bench out.svg")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-quick", "-quiet", "-dir", parent, "-json", jsonPath, "-svg", svgPath}, &stdout, &stderr)
	require.NoError(t, err, "bench -quick failed; stderr:\n%s", stderr.String())

	var rep report
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, strings.Split(defaultArms, ","), rep.Env.Arms, "arms in the JSON")
	have := map[string]bool{}
	for _, r := range rep.Rows {
		have[r.Arm+" "+r.Probe+"/"+r.Metric] = true
	}
	for _, a := range rep.Env.Arms {
		for _, m := range requiredMetrics {
			assert.True(t, have[a+" "+m], "got no row %s for arm %s, want one", m, a)
		}
		assert.Equal(t, a != "idle", have[a+" agents/spin_Miter_per_s"], "agents' throughput row for arm %s", a)
	}
	assertStallCounts(t, rep)
	assert.Contains(t, stdout.String(), "| probe | metric | idle | default | agent | background | setsid | setsid-fix |", "table header")
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg", "got an SVG file without <svg")

	assertGone(t, parent, rep.Env.Scratch)
	assert.Empty(t, workers(t, rep.Env.Marker), "got worker processes left, want none")
}

// assertStallCounts checks that the reports_naming_file rows count the
// stall reports the JSON lists, arm by arm and loop by loop.
func assertStallCounts(t *testing.T, rep report) {
	t.Helper()
	listed := map[string][2]int{} // arm/metric -> reports, naming the file
	for _, r := range rep.StallReports {
		k := r.Arm + "/reports_naming_file_" + strings.TrimPrefix(r.Loop, "ui-")
		c := listed[k]
		c[0]++
		if r.NamesFile {
			c[1]++
		}
		listed[k] = c
	}
	for _, r := range rep.Rows {
		if r.Probe == uiStallProbe && strings.HasPrefix(r.Metric, "reports_naming_file_") {
			c := listed[r.Arm+"/"+r.Metric]
			assert.Equal(t, [2]int{c[0], c[1]}, [2]int{r.N, r.K}, "%s %s: got n, k from the rows, want the JSON's reports", r.Arm, r.Metric)
		}
	}
}

// TestCancelKillsWorkers cancels the run (as Ctrl-C does through
// signal.NotifyContext) while the default arm's load runs.
func TestCancelKillsWorkers(t *testing.T) {
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := shortConfig(t, parent)
	var seen int
	cfg.onArm = func(a string) {
		if a == "default" {
			seen = len(workers(t, thisRun()))
			cancel()
		}
	}
	err := runBench(ctx, cfg, testExe(t), io.Discard, io.Discard)
	assert.ErrorIs(t, err, context.Canceled, "got %v, want the run to end with context.Canceled", err)
	assert.Equal(t, cfg.spinners+cfg.writers+cfg.storms+cfg.readers, seen, "workers running during the arm")
	assertGone(t, parent, "")
	assert.Empty(t, workers(t, thisRun()), "got worker processes left after cancel, want none")
}

// TestPanicKillsWorkers panics on the run's goroutine while the load runs.
func TestPanicKillsWorkers(t *testing.T) {
	parent := t.TempDir()
	cfg := shortConfig(t, parent)
	cfg.onArm = func(a string) {
		if a == "default" {
			panic("test panic")
		}
	}
	func() {
		defer func() {
			assert.Equal(t, "test panic", recover(), "got recovered value, want the test's panic")
		}()
		_ = runBench(t.Context(), cfg, testExe(t), io.Discard, io.Discard)
	}()
	assertGone(t, parent, "")
	assert.Empty(t, workers(t, thisRun()), "got worker processes left after a panic, want none")
}

func shortConfig(t *testing.T, parent string) *config {
	t.Helper()
	cfg, err := parseConfig([]string{"-quick", "-quiet", "-duration", "1s", "-arms", "idle,default", "-spinners", "2", "-dir", parent}, io.Discard)
	require.NoError(t, err)
	return cfg
}

func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// thisRun is the prefix of the marker of every run this test process makes
// (the pool's marker starts with the bench's pid).
func thisRun() string { return runEnv + "=" + strconv.Itoa(os.Getpid()) + "-" }

// assertGone checks that the scratch folder is removed and nothing else is
// left in its parent.
func assertGone(t *testing.T, parent, scratch string) {
	t.Helper()
	if scratch != "" {
		_, err := os.Stat(scratch)
		assert.True(t, errors.Is(err, os.ErrNotExist), "scratch folder %q: got %v, want it removed", scratch, err)
	}
	left, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, left, "got files left in the scratch folder's parent, want none")
}

// workers lists the processes whose environment carries marker, and the
// zombie children of this process (a worker not reaped).
func workers(t *testing.T, marker string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var found []string
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(env, []byte(marker)) {
			found = append(found, e.Name())
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		// proc(5): after "(comm)", field 3 is the state and field 4 the ppid.
		if _, rest, ok := strings.Cut(string(stat), ") "); ok {
			if f := strings.Fields(rest); len(f) > 1 && f[0] == "Z" && f[1] == self {
				found = append(found, e.Name()+" (zombie)")
			}
		}
	}
	return found
}
