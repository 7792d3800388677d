//go:build linux

package powercut

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// counters are the helper's cut and operation counts, in memory both
// processes map (a memfd, memfd_create(2), shared with MAP_SHARED): the
// helper stores them before it answers the operation or call that changed
// them, so this process reads them the moment that returns, without a
// round trip and without waiting for the helper's event to be read. A
// Torture checks after every step whether its cut has come; a step taken
// after the cut is one the writer could never have made.
type counters struct {
	mem []byte // the mapping: cuts at 0, ops at 8
}

const countersSize = 16

func (c *counters) cuts() *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&c.mem[0])) }
func (c *counters) ops() *atomic.Uint64  { return (*atomic.Uint64)(unsafe.Pointer(&c.mem[8])) }

// newCounters makes the counters in this process. path is where the
// helper opens them: this process's descriptor, under /proc, which stays
// open until done is called (once the helper has mapped them).
func newCounters() (c *counters, path string, done func(), err error) {
	fd, err := unix.MemfdCreate("powercut-counters", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, "", nil, fmt.Errorf("powercut: counters: %w", err)
	}
	c, err = mapCounters(fd)
	if err != nil {
		unix.Close(fd)
		return nil, "", nil, err
	}
	return c, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd), func() { unix.Close(fd) }, nil
}

// openCounters maps, in the helper, the counters at path.
func openCounters(path string) (*counters, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("powercut: counters: %w", err)
	}
	defer unix.Close(fd)
	return mapCounters(fd)
}

func mapCounters(fd int) (*counters, error) {
	if err := unix.Ftruncate(fd, countersSize); err != nil {
		return nil, fmt.Errorf("powercut: counters: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, countersSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("powercut: counters: %w", err)
	}
	return &counters{mem: mem}, nil
}

// unmap ends the mapping; the counters must not be used after.
func (c *counters) unmap() error { return unix.Munmap(c.mem) }
