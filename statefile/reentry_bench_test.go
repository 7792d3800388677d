package statefile

import "testing"

// BenchmarkGoid is the cost a Load or Flush pays to tell whether it runs
// on a writer, while some writer of the Store is inside a step.
func BenchmarkGoid(b *testing.B) {
	for b.Loop() {
		goid()
	}
}
