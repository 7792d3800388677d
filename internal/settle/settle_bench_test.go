package settle

import (
	"testing"
	"time"
)

func BenchmarkMark(b *testing.B) {
	s := New(Options{Settle: time.Hour, MaxWait: time.Hour}, func() {})
	defer s.Stop()
	b.ReportAllocs()
	for b.Loop() {
		s.Mark()
	}
}
