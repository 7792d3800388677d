//go:build linux

package stall

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A sampler reads, every tick, which system call each thread of the
// process is in, from /proc/self/task/<tid>/syscall: the call's number
// and arguments while the thread is blocked in one, "running" while it
// runs (proc_pid_syscall(5)). For the calls in fileCalls it resolves the
// file while the call goes on, as only then do the descriptor and the
// path argument still mean it: the descriptor's link in /proc/self/fd
// (proc_pid_fd(5)), or the path string read from this process's memory
// through /proc/self/mem. A goroutine runs a system call on one thread
// from start to end, so the trace's thread of a wait finds its episode
// here, even for a goroutine not locked to a thread. The files stay open
// between ticks: a read of one costs a few microseconds.
type sampler struct {
	tick       time.Duration
	quit, done chan struct{}

	// Owned by the sampling goroutine.
	task    *os.File           // /proc/self/task
	mem     *os.File           // /proc/self/mem, or nil
	threads map[int64]*os.File // each thread's syscall file
	buf     []byte

	mu   sync.Mutex         // protects cur and past; the sampling goroutine reads them unlocked, as it alone writes
	cur  map[int64]*episode // each thread's call in progress, by thread
	past []episode          // ended, oldest first
}

// An episode is a file system call one thread was seen in.
type episode struct {
	tid         int64
	nr, a0, a1  uint64 // the call and its first two arguments
	name, path  string
	first, last int64 // monotonic times of the first and last sample that saw it
}

// keepPast is how long an ended episode is kept for lookups: a wait is
// looked up at the pass after it ends, within two periods.
const keepPast = 3 * period

func newSampler(tick time.Duration) *sampler {
	return &sampler{tick: min(max(tick, 2*time.Millisecond), 500*time.Millisecond),
		threads: map[int64]*os.File{}, cur: map[int64]*episode{}, buf: make([]byte, 256)}
}

// start starts the sampling goroutine, unless /proc cannot be read:
// lookups then find nothing.
func (s *sampler) start() {
	task, err := os.Open("/proc/self/task")
	if err != nil {
		return
	}
	s.task = task
	s.mem, _ = os.Open("/proc/self/mem") // nil: paths given as arguments stay unknown
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	go s.run()
}

// stop ends the sampling goroutine and closes its files.
func (s *sampler) stop() {
	if s.quit == nil {
		return
	}
	close(s.quit)
	<-s.done
}

func (s *sampler) run() {
	defer close(s.done)
	defer s.close()
	t := time.NewTicker(s.tick)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *sampler) close() {
	for _, f := range s.threads {
		f.Close()
	}
	s.task.Close()
	if s.mem != nil {
		s.mem.Close()
	}
}

// sample reads each thread's system call once, but its own thread's: that
// one is reading.
func (s *sampler) sample() {
	now, self := monotime(), int64(unix.Gettid())
	s.refresh()
	for tid, f := range s.threads {
		if tid == self {
			continue
		}
		n, err := f.ReadAt(s.buf, 0)
		if n == 0 && err != nil { // the thread has exited: ESRCH
			f.Close()
			delete(s.threads, tid)
			s.saw(tid, nil, now)
			continue
		}
		s.saw(tid, s.buf[:n], now)
	}
}

// refresh opens the syscall file of each thread that is new since the
// last tick.
func (s *sampler) refresh() {
	if _, err := s.task.Seek(0, io.SeekStart); err != nil {
		return
	}
	names, _ := s.task.Readdirnames(-1)
	for _, name := range names {
		tid, err := strconv.ParseInt(name, 10, 64)
		if err != nil || s.threads[tid] != nil {
			continue
		}
		if f, err := os.Open("/proc/self/task/" + name + "/syscall"); err == nil {
			s.threads[tid] = f
		}
	}
}

// saw records that thread tid was in the call line describes at now
// (nil: in none).
func (s *sampler) saw(tid int64, line []byte, now int64) {
	nr, a0, a1, ok := parseSyscall(line)
	call, ok := fileCalls[nr], ok && fileCalls[nr].name != ""
	if e := s.cur[tid]; e != nil {
		if ok && e.nr == nr && e.a0 == a0 && e.a1 == a1 {
			s.mu.Lock()
			e.last = now
			s.mu.Unlock()
			return
		}
		s.retire(tid, now)
	}
	if !ok {
		return
	}
	e := &episode{tid: tid, nr: nr, a0: a0, a1: a1, name: call.name, path: s.path(call, a0, a1), first: now, last: now}
	s.mu.Lock()
	s.cur[tid] = e
	s.mu.Unlock()
}

// retire ends the episode of thread tid, and forgets those too old to be
// looked up.
func (s *sampler) retire(tid int64, now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.past = append(s.past, *s.cur[tid])
	delete(s.cur, tid)
	i := 0
	for i < len(s.past) && now-s.past[i].last > int64(keepPast) {
		i++
	}
	s.past = append(s.past[:0], s.past[i:]...)
}

// lookup returns the call and file of the episode of thread tid that
// overlaps the monotonic times from to to the most, if any.
func (s *sampler) lookup(tid int64, from, to int64) (name, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := int64(-1)
	consider := func(e *episode) {
		if o := min(e.last, to) - max(e.first, from); e.tid == tid && o > best {
			best, name, path = o, e.name, e.path
		}
	}
	if e := s.cur[tid]; e != nil {
		consider(e)
	}
	for i := range s.past {
		consider(&s.past[i])
	}
	return name, path
}

// path returns the file of call, whose first arguments are a0 and a1, as
// this process sees it now, or "" if it is gone.
func (s *sampler) path(call fileCall, a0, a1 uint64) string {
	fd := int32(a0) // a descriptor is an int; AT_FDCWD is negative
	if !call.at || a1 == 0 {
		return fdPath(fd)
	}
	p := s.cstring(a1)
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	dir := fdPath(fd)
	if fd == unix.AT_FDCWD {
		dir, _ = os.Readlink("/proc/self/cwd")
	}
	if dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// fdPath returns the link of descriptor fd: a path, or "pipe:[1234]".
func fdPath(fd int32) string {
	p, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	return p
}

// cstring reads the NUL-terminated string at addr in this process's
// memory. /proc/self/mem fails on an address no longer mapped instead of
// faulting, so a stale pointer costs nothing.
func (s *sampler) cstring(addr uint64) string {
	if s.mem == nil {
		return ""
	}
	var b [unix.PathMax]byte
	n, _ := s.mem.ReadAt(b[:], int64(addr))
	for i, c := range b[:n] {
		if c == 0 {
			return string(b[:i])
		}
	}
	return ""
}

// parseSyscall parses a line of /proc/<pid>/task/<tid>/syscall: the
// call's number then its six arguments, the stack pointer and the
// program counter, in hexadecimal ("0 0x5 0xc000123000 0x1 0x0 0x0 0x0
// 0x7ffd1234 0x4a1b2c"); "-1 <sp> <pc>" when blocked outside a call;
// "running" when on a CPU (proc_pid_syscall(5); fs/proc/base.c,
// proc_pid_syscall).
func parseSyscall(line []byte) (nr, a0, a1 uint64, ok bool) {
	var f [3][]byte
	n := 0
	for w := range bytes.FieldsSeq(line) {
		f[n] = w
		if n++; n == len(f) {
			break
		}
	}
	if n < len(f) || f[0][0] == '-' {
		return 0, 0, 0, false
	}
	nr, e0 := strconv.ParseUint(string(f[0]), 10, 64)
	a0, e1 := strconv.ParseUint(string(bytes.TrimPrefix(f[1], []byte("0x"))), 16, 64)
	a1, e2 := strconv.ParseUint(string(bytes.TrimPrefix(f[2], []byte("0x"))), 16, 64)
	return nr, a0, a1, e0 == nil && e1 == nil && e2 == nil
}

// monotime reads CLOCK_MONOTONIC, the clock of the runtime's nanotime
// (nanotime1 in runtime/sys_linux_amd64.s) and so of the execution
// trace's timestamps on Linux (traceClockNow in runtime/tracetime.go).
func monotime() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
