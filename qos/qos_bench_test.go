//go:build linux

package qos

import (
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkStartUnderLoad measures how long Start takes to return while
// 2×NumCPU busy loops at nice 0 saturate the CPUs, in the same session (and
// so the same autogroup) as the benchmark. The child is /bin/true; the time
// to wait for it is not counted in the reported percentiles (ns/op includes
// it). Mode off is plain cmd.Start, for comparison.
//
//	go test -run '^$' -bench StartUnderLoad -benchtime 40x ./qos/
func BenchmarkStartUnderLoad(b *testing.B) {
	for range 2 * runtime.NumCPU() {
		spin := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
	}
	for _, m := range []Mode{ModeOff, ModeUtility, ModeBackground} {
		b.Run(string(m), func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				t0 := time.Now()
				if err := Start(cmd, Agent, m); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
				_ = cmd.Wait()
			}
			reportPercentiles(b, took)
		})
	}
}

// reportPercentiles reports the median, 95th percentile and maximum of took
// in milliseconds.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*95/100]), "p95-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
}
