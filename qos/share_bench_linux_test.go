//go:build linux

package qos

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkShareBesideUserJob measures what the Agent tier costs an agent
// when the person's own CPU job (a build in a terminal, at nice 0) wants the
// same core: two spinning threads pinned to CPU 0, one at nice 0 and one
// lowered as Start lowers an agent at the given nice value, each for 400 ms
// a round. agent_share is the lowered thread's part of their work. CFS
// predicts weight(nice)/(weight(nice)+1024) (kernel/sched/core.c,
// sched_prio_to_weight: 335 at nice 5, 110 at 10, 36 at 15, 15 at 19), as
// long as both stay in one autogroup, which threads of one process do.
//
//	go test -run '^$' -bench ShareBesideUserJob -benchtime 5x ./qos/
func BenchmarkShareBesideUserJob(b *testing.B) {
	for _, nice := range []int{0, 5, 10, utilityNice, 19} {
		b.Run(fmt.Sprintf("nice=%d", nice), func(b *testing.B) {
			var agent, user float64
			for b.Loop() {
				a, u := spinPair(b, setting{nice: nice, ioClass: ioprioClassBE, ioLevel: 7}, 400*time.Millisecond)
				agent, user = agent+a, user+u
			}
			b.ReportMetric(agent/(agent+user), "agent_share")
		})
	}
}

// spinPair spins two threads pinned to CPU 0 for d, one lowered to s, and
// returns how many iterations each made.
func spinPair(b *testing.B, s setting, d time.Duration) (lowered, user float64) {
	var (
		stop   atomic.Bool
		counts [2]atomic.Int64
		ready  sync.WaitGroup
		done   sync.WaitGroup
	)
	spin := func(i int) func() error {
		return func() error {
			var set unix.CPUSet
			set.Set(0)
			err := unix.SchedSetaffinity(0, &set)
			ready.Done()
			if err != nil {
				return err
			}
			n := int64(0)
			for !stop.Load() {
				n++
			}
			counts[i].Store(n)
			return nil
		}
	}
	ready.Add(2)
	done.Add(2)
	for i, lower := range []lowerFunc{lowerTo(s), func() (func() error, error) { return nil, nil }} {
		go func() {
			defer done.Done()
			if err := runLowered(lower, spin(i)); err != nil {
				b.Error(err)
			}
		}()
	}
	ready.Wait()
	t := time.NewTimer(d)
	<-t.C
	stop.Store(true)
	done.Wait()
	return float64(counts[0].Load()), float64(counts[1].Load())
}
