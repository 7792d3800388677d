package stall

import (
	"bytes"
	"runtime"
	rtrace "runtime/trace"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/exp/trace"
)

// recording returns a flight recording of d of two goroutines passing a
// token back and forth as fast as they can, and the number of events in
// it.
func recording(b *testing.B, d time.Duration) ([]byte, int) {
	fr := rtrace.NewFlightRecorder(rtrace.FlightRecorderConfig{MinAge: 2 * d, MaxBytes: 256 << 20})
	require.NoError(b, fr.Start())
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
		close(pong)
	}()
	for start := time.Now(); time.Since(start) < d; {
		ping <- 1
		<-pong
	}
	close(ping)
	<-pong
	var buf bytes.Buffer
	_, err := fr.WriteTo(&buf)
	fr.Stop()
	require.NoError(b, err)
	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()))
	require.NoError(b, err)
	n := 0
	for _, err := r.ReadEvent(); err == nil; _, err = r.ReadEvent() {
		n++
	}
	return buf.Bytes(), n
}

// BenchmarkPass is the cost of a watcher's pass over a recording, per
// event: what reading the trace costs the process while watching.
func BenchmarkPass(b *testing.B) {
	data, n := recording(b, 200*time.Millisecond)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		a := analyzer{g: 1, budget: frame60Hz, goos: runtime.GOOS, limit: limiter{},
			files: func(int64, int64, int64) (string, string) { return "", "" }}
		require.NoError(b, a.pass(data, false))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	b.ReportMetric(float64(n), "events")
}
