package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// counters is a worker's progress, two uint64s in a small file that the
// worker and the bench both map shared (mmap(2), MAP_SHARED: stores are seen
// by every process mapping the file), so the bench reads the agents' real
// work at the start and end of each window without asking the worker.
type counters struct {
	mem []byte
}

const countersSize = 16

// openCounters maps path, creating it (zeroed) when create is set.
func openCounters(path string, create bool) (*counters, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if create {
		if err := f.Truncate(countersSize); err != nil {
			return nil, err
		}
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, countersSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return &counters{mem: mem}, nil
}

// word returns the i-th uint64 of the page-aligned mapping.
func (c *counters) word(i int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&c.mem[8*i]))
}

// add records ops operations and n bytes.
func (c *counters) add(ops, n uint64) {
	c.word(0).Add(ops)
	if n != 0 {
		c.word(1).Add(n)
	}
}

// load returns the operations and bytes so far.
func (c *counters) load() (ops, n uint64) { return c.word(0).Load(), c.word(1).Load() }

// close unmaps the counters; a nil *counters has nothing to close.
func (c *counters) close() error {
	if c == nil {
		return nil
	}
	return unix.Munmap(c.mem)
}

// pacer holds a worker to its offered rate (see pace); a zero rate never waits.
type pacer struct {
	rate  float64
	start time.Time
	done  float64
	t     *time.Timer
}

func newPacer(rate float64) *pacer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pacer{rate: rate, start: time.Now(), t: t}
}

// did records units of work and waits until the schedule catches up.
func (p *pacer) did(units float64) {
	if p.rate <= 0 {
		return
	}
	p.done += units
	if d := paceDelay(p.done, p.rate, time.Since(p.start)); d > 0 {
		p.t.Reset(d)
		<-p.t.C
	}
}
