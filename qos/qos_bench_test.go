//go:build linux

package qos

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// BenchmarkStartUnderDiskLoad measures how long Start takes to return while
// two writers at the default I/O priority keep the disk busy (1 MiB writes
// with an fsync every 64 MiB, as a build or a git checkout), for a child
// whose binary is not in the page cache (a copy of /bin/true dropped with
// posix_fadvise DONTNEED before each Start), so exec must read it from the
// disk. In mode background the child starts at I/O class idle, which
// mq-deadline and BFQ serve only when nothing else waits.
//
//	go test -run '^$' -bench StartUnderDiskLoad -benchtime 20x ./qos/
func BenchmarkStartUnderDiskLoad(b *testing.B) {
	dir := b.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		b.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		b.Skipf("%s is on tmpfs: no disk to load and nothing for exec to read (set TMPDIR to a disk)", dir)
	}
	for i := range 2 {
		// In a process group of its own, so the clean-up stops dd with the
		// shell: a dd left running would load the next benchmark.
		w := exec.Command("/bin/sh", "-c",
			`while :; do dd if=/dev/zero of="$0" bs=1M count=64 conv=fsync status=none; done`,
			filepath.Join(dir, "load"+strconv.Itoa(i)))
		w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = unix.Kill(-w.Process.Pid, unix.SIGKILL); _ = w.Wait() })
	}
	bin := filepath.Join(dir, "true")
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.Fatal(err)
	}
	drop := func() {
		f, err := os.Open(bin)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range []Mode{ModeOff, ModeUtility, ModeBackground} {
		b.Run(string(m), func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				b.StopTimer()
				drop()
				b.StartTimer()
				cmd := exec.Command(bin)
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
