//go:build linux

package qos

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStartGroup measures what holding a command's tree costs a
// Start: how long Start takes to return for /bin/true, quiet and beside
// 2×NumCPU busy loops at nice 0 in the benchmark's session, for each way
// of starting. "Start" is the package's Start with no process group (in mode
// background forked from a SCHED_IDLE thread), "Start-pgid" with one of
// its own (traced: SCHED_IDLE taken at exec), "Group" a Group in an app
// that calls Main (the keeper and the holder, two more execs of this
// binary), "Group-noMain" a Group without them. The time to wait for the
// command is not counted in the percentiles (ns/op includes it).
//
//	go test -run '^$' -bench StartGroup -benchtime 40x ./qos/
func BenchmarkStartGroup(b *testing.B) {
	for _, load := range []string{"quiet", "load"} {
		b.Run(load, func(b *testing.B) {
			if load == "load" {
				for range 2 * runtime.NumCPU() {
					spin := exec.Command("/bin/sh", "-c", "while :; do :; done")
					if err := spin.Start(); err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
				}
			}
			for _, m := range []Mode{ModeUtility, ModeBackground} {
				for _, way := range []string{"Start", "Start-pgid", "Group", "Group-noMain"} {
					b.Run(fmt.Sprintf("%s/%s", m, way), func(b *testing.B) {
						var took []time.Duration
						for b.Loop() {
							took = append(took, startOnce(b, way, m))
						}
						reportPercentiles(b, took)
					})
				}
			}
		})
	}
}

// startOnce starts /bin/true one way and returns how long Start took.
func startOnce(b *testing.B, way string, m Mode) time.Duration {
	cmd := exec.Command("/bin/true")
	g := Group{OnError: func(error) {}} // without Main, each Group says so once
	start := func() error { return Start(cmd, Agent, m) }
	switch way {
	case "Start-pgid":
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	case "Group":
		start = func() error { return g.Start(cmd, Agent, m) }
	case "Group-noMain":
		hooked.Store(false)
		defer hooked.Store(true)
		start = func() error { return g.Start(cmd, Agent, m) }
	}
	t0 := time.Now()
	if err := start(); err != nil {
		b.Fatal(err)
	}
	took := time.Since(t0)
	_ = cmd.Wait()
	if err := g.Stop(b.Context()); err != nil {
		b.Fatal(err) // nothing left to stop: Wait returned once /bin/true and its tree ended
	}
	return took
}
