package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParseCPUFields(t *testing.T) {
	c, err := parseCPUFields("cpu  100 5 50 800 50 3 2 40 7 0")
	require.NoError(t, err)
	assert.Equal(t, cpuFields{100, 5, 50, 800, 50, 3, 2, 40}, c, "the eight fields before guest")
	assert.Equal(t, uint64(1050), c.total(), "total: guest is already in user")
	_, err = parseCPUFields("intr 1 2 3 4 5")
	assert.Error(t, err, "a line that is not cpu")
}

// TestParseCPULine checks that guest time, which /proc/stat already counts
// in user and nice (proc(5)), is not counted twice as busy.
func TestParseCPULine(t *testing.T) {
	busy, total, err := parseCPULine("cpu  100 0 50 800 50 0 0 0 40 0")
	require.NoError(t, err)
	assert.Equal(t, uint64(150), busy, "busy jiffies: user + system, guest not again")
	assert.Equal(t, uint64(1000), total, "total jiffies")
}

func TestParseProcCPU(t *testing.T) {
	stat := "42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 17 4 0 0 20 0 1 0 100 1000 10"
	v, err := parseProcCPU(stat)
	require.NoError(t, err)
	assert.Equal(t, uint64(21), v, "utime 17 + stime 4")
	_, err = parseProcCPU("42 (x) S 1")
	assert.Error(t, err, "short stat")
}

func TestParseThreadTier(t *testing.T) {
	// Fields 3..41 after the name: nice (19) is 5, policy (41) is 5 (SCHED_IDLE).
	f := make([]string, 39)
	for i := range f {
		f[i] = "0"
	}
	f[19-3], f[41-3] = "5", "5"
	stat := "7 (w) " + joinFields(f)
	tt, err := parseThreadTier(stat)
	require.NoError(t, err)
	assert.Equal(t, threadTier{nice: 5, policy: unix.SCHED_IDLE}, tt)
	assert.Equal(t, "nice 5, SCHED_IDLE, I/O best-effort 7", threadTier{nice: 5, policy: 5, ioprio: 2<<13 | 7}.String())
}

func joinFields(f []string) string {
	s := ""
	for i, x := range f {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

func TestParsePSITotal(t *testing.T) {
	s := "some avg10=1.00 avg60=0.50 avg300=0.10 total=2500000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"
	v, err := parsePSITotal(s)
	require.NoError(t, err)
	assert.InDelta(t, 2.5, v, 1e-12, "some total in seconds")
	_, err = parsePSITotal("full avg10=0 total=1\n")
	assert.Error(t, err, "no some line")
}

func TestParseSchedstat(t *testing.T) {
	d, err := parseSchedstat("123456 7890000 42\n")
	require.NoError(t, err)
	assert.Equal(t, 7890*time.Microsecond, d, "run-queue delay")
	_, err = parseSchedstat("1 2")
	assert.Error(t, err, "two fields")
}

// TestThreadRunDelay reads the calling thread's schedstat, which every
// kernel with CONFIG_SCHED_INFO (on in distribution kernels) has.
func TestThreadRunDelay(t *testing.T) {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		t.Skip("this kernel has no schedstat (CONFIG_SCHED_INFO off):", err)
	}
	_, err := threadRunDelay()
	assert.NoError(t, err)
}

// TestWindowSeries checks the throughput accounting (each kind's work
// between the snapshots, over the window's seconds) and the machine's
// figures: steal, the app's CPU, CPU outside the bench, and the flag.
func TestWindowSeries(t *testing.T) {
	s0 := snapshot{at: time.Second, own: 100, app: 40, psiOK: true, psi: [2]float64{1, 2},
		cpu:      cpuFields{1000, 0, 500, 5000, 0, 0, 0, 10},
		progress: map[string][2]uint64{"spin": {10, 0}, "write": {5, 5 << 20}, "read": {1, 128 << 10}, "meta": {400, 0}}}
	s1 := snapshot{at: 3 * time.Second, own: 400, app: 130, psiOK: true, psi: [2]float64{1.5, 2.2},
		cpu:      cpuFields{1250, 0, 600, 5100, 0, 0, 0, 60},
		progress: map[string][2]uint64{"spin": {30, 0}, "write": {9, 9 << 20}, "read": {3, 384 << 10}, "meta": {1400, 0}}}
	got := windowSeries(s0, s1)
	want := map[string][]float64{
		"agent.secs": {2}, "agent.spin": {20}, "agent.write": {4 << 20}, "agent.read": {256 << 10}, "agent.meta": {1000},
		"machine.total": {500}, "machine.steal": {50}, "machine.other": {50}, "machine.flagged": {1}, "machine.secs": {2},
		"machine.app": {90},
	}
	for k, v := range want {
		assert.Equal(t, v, got[k], "%s", k)
	}
	assert.InDelta(t, 0.5, got["machine.psi_cpu"][0], 1e-9, "PSI cpu")
	assert.InDelta(t, 0.2, got["machine.psi_io"][0], 1e-9, "PSI io")

	s1.cpu[cpuSteal], s1.progress = 10, nil
	got = windowSeries(s0, s1)
	assert.Equal(t, []float64{0}, got["machine.flagged"], "no steal, other 50 of 450 ticks (11%%): not flagged")
	_, ok := got["agent.secs"]
	assert.False(t, ok, "no workers: no agent series")
}
