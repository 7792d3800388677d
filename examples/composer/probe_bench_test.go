package main

import (
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// BenchmarkProbeOff is the probe's cost per key when OFFMAIN_TYPING_PROBE is
// unset: all six calls a key makes (read, Update, save, View, and the frame
// write's start and end), each one atomic load of a nil pointer.
func BenchmarkProbeOff(b *testing.B) {
	var r probeRef
	k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")}
	b.ReportAllocs()
	for b.Loop() {
		r.keyRead()
		r.updateEntered(k)
		r.saveReturned()
		r.viewRendered()
		r.frameWritten(r.frameWriteStart())
	}
}

// BenchmarkAtomicLoads is the floor BenchmarkProbeOff is compared with: six
// atomic loads of a pointer.
func BenchmarkAtomicLoads(b *testing.B) {
	var p atomic.Pointer[probe]
	n := 0
	for b.Loop() {
		for range 6 {
			if p.Load() != nil {
				n++
			}
		}
	}
	if n != 0 {
		b.Fatal("loaded a probe")
	}
}

// BenchmarkProbeOn is the cost per key with the probe on (the clock reads
// and the bookkeeping; the CSV is written on the probe's own goroutine).
func BenchmarkProbeOn(b *testing.B) {
	var r probeRef
	r.p.Store(startProbe(discard{}, nil))
	k := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")}
	b.ReportAllocs()
	for b.Loop() {
		r.keyRead()
		r.updateEntered(k)
		r.saveReturned()
		r.viewRendered()
		r.frameWritten(r.frameWriteStart())
	}
	b.StopTimer()
	_ = r.p.Load().close()
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
