//go:build linux

package stall

import (
	"os"
	"testing"
)

// BenchmarkSample is the cost of one tick of the sampler: reading the
// system call of every thread of this process.
func BenchmarkSample(b *testing.B) {
	s := newSampler(frame60Hz / 2)
	task, err := os.Open("/proc/self/task")
	if err != nil {
		b.Skip("no /proc:", err)
	}
	s.task = task
	defer s.close()
	s.sample()
	b.ReportAllocs()
	for b.Loop() {
		s.sample()
	}
	b.ReportMetric(float64(len(s.threads)), "threads")
}
