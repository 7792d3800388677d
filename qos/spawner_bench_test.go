//go:build linux

package qos

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStartPdeathsig compares the two ways Start forks on Linux: a
// fresh thread per Start, lowered and retired (commands without
// Pdeathsig), and the long-lived spawner thread (commands with Pdeathsig),
// while 2×NumCPU busy loops at nice 0 load the CPUs. "one" starts /bin/true
// one at a time and reports Start's percentiles; "burst8" starts eight at
// once from eight goroutines and reports how long the last Start took to
// return (the spawner starts them one after another).
//
//	go test -run '^$' -bench StartPdeathsig -benchtime 200x ./qos/
func BenchmarkStartPdeathsig(b *testing.B) {
	for range 2 * runtime.NumCPU() {
		spin := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
	}
	command := func(pdeathsig bool) *exec.Cmd {
		cmd := exec.Command("/bin/true")
		if pdeathsig {
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		}
		return cmd
	}
	for _, m := range []Mode{ModeUtility, ModeBackground} {
		for _, way := range []struct {
			name      string
			pdeathsig bool
		}{{"fresh", false}, {"spawner", true}} {
			b.Run(string(m)+"/one/"+way.name, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					cmd := command(way.pdeathsig)
					t0 := time.Now()
					if err := Start(cmd, Agent, m); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(t0))
					_ = cmd.Wait()
				}
				reportPercentiles(b, took)
			})
			b.Run(string(m)+"/burst8/"+way.name, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					took = append(took, burst(b, 8, func() *exec.Cmd { return command(way.pdeathsig) }, m))
				}
				reportPercentiles(b, took)
			})
		}
	}
}

// burst starts n commands at once and returns when the last Start returned.
func burst(b *testing.B, n int, command func() *exec.Cmd, m Mode) time.Duration {
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = command()
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	for _, cmd := range cmds {
		wg.Go(func() {
			if err := Start(cmd, Agent, m); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	for _, cmd := range cmds {
		if cmd.Process != nil {
			_ = cmd.Wait()
		}
	}
	return took
}
