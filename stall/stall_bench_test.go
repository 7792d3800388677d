package stall_test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/stall"
)

// BenchmarkFrame is the cost of a Frame mark and its end: off, when
// nothing is watched, and on.
func BenchmarkFrame(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stall.Frame()()
		}
	})
	b.Run("on", func(b *testing.B) {
		stop, err := stall.Watch(stall.Options{OnReport: func(stall.Report) {}})
		require.NoError(b, err)
		defer stop()
		b.ReportAllocs()
		for b.Loop() {
			stall.Frame()()
		}
	})
}

func TestFrameOffAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(1000, func() { stall.Frame()() }); n != 0 {
		t.Errorf("a Frame mark with nothing watched allocates %v times, want 0", n)
	}
}

// A uiLoop runs UI-like frames: inside a Frame mark, four bursts of CPU
// work (hashing 16 KiB, burst times), each followed by what UI code does
// between them: a round trip to another goroutine (a queued call
// answered) and an os.Stat (an icon lookup), none long enough to report.
type uiLoop struct {
	burst          int // hashes a burst
	calls, answers chan int
	file           string
	buf            []byte
}

func newUILoop(b *testing.B, burst int) *uiLoop {
	ui := &uiLoop{burst: burst, calls: make(chan int), answers: make(chan int),
		file: filepath.Join(b.TempDir(), "icon.png"), buf: make([]byte, 16<<10)}
	require.NoError(b, os.WriteFile(ui.file, ui.buf, 0o600))
	go func() {
		defer close(ui.answers)
		for c := range ui.calls {
			ui.answers <- c + 1
		}
	}()
	b.Cleanup(func() { close(ui.calls); <-ui.answers })
	return ui
}

func (ui *uiLoop) frame() {
	defer stall.Frame()()
	for i := range 4 {
		for range ui.burst {
			sha256.Sum256(ui.buf)
		}
		ui.calls <- i
		<-ui.answers
		os.Stat(ui.file)
	}
}

// frames runs n frames and returns how long they took.
func (ui *uiLoop) frames(n int) time.Duration {
	start := time.Now()
	for range n {
		ui.frame()
	}
	return time.Since(start)
}

// BenchmarkUILoop runs the same frames with nothing watched and watched,
// in alternating halves, on a goroutine locked to its thread as Fyne's
// and Gio's are. It reports the time a frame takes each way and their
// ratio, and the ratios of CPU time on to off: the UI thread's own
// (recording the trace's events), and the whole process's (the
// watcher's goroutines too). "5ms" frames do about 5 ms of work with
// about 30 trace events, as a UI at 60 Hz might; "dense" frames do one
// hash a burst, so that recording and reading the trace weigh as much as
// they can. With -benchtime=4s or more each watched half lasts over a
// second and includes the watcher's passes.
func BenchmarkUILoop(b *testing.B) {
	for _, bc := range []struct {
		name  string
		burst int
	}{{"5ms", 128}, {"dense", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ui := newUILoop(b, bc.burst)
			var off, on cost
			half := max(b.N/2, 1)
			for range 2 {
				off.add(measure(func() { ui.frames(half) }))
				stop, err := stall.Watch(stall.Options{OnReport: func(stall.Report) {}})
				require.NoError(b, err)
				on.add(measure(func() { ui.frames(half) }))
				stop()
			}
			n := float64(2 * half)
			b.ReportMetric(float64(off.wall.Nanoseconds())/n, "off-ns/frame")
			b.ReportMetric(float64(on.wall.Nanoseconds())/n, "on-ns/frame")
			b.ReportMetric(float64(on.wall)/float64(off.wall), "on/off")
			if off.thread > 0 {
				b.ReportMetric(float64(on.thread)/float64(off.thread), "ui-cpu-on/off")
				b.ReportMetric(float64(on.process)/float64(off.process), "cpu-on/off")
			}
		})
	}
}

// A cost is the wall time, the calling thread's CPU time and the
// process's CPU time of some work.
type cost struct{ wall, thread, process time.Duration }

func (c *cost) add(d cost) {
	c.wall += d.wall
	c.thread += d.thread
	c.process += d.process
}

func measure(work func()) cost {
	start, th, pr := time.Now(), threadCPU(), processCPU()
	work()
	return cost{time.Since(start), threadCPU() - th, processCPU() - pr}
}
