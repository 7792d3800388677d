//go:build linux

package qos

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// A spawner is one OS thread, lowered to a fork setting, that starts the
// commands with SysProcAttr.Pdeathsig for that setting and lives as long as
// any of them does. prctl(2) PR_SET_PDEATHSIG: the signal is sent when the
// thread that created the child exits, even while other threads of its
// process live on (kernel/exit.c, forget_original_parent; the Go runtime
// sets it in the child, syscall/exec_linux.go, forkAndExecInChild1). The
// fresh thread a Start retires would kill such a child at once; a thread
// that outlives its children makes the signal mean what callers want: the
// app died (an exit, a crash, SIGKILL).
//
// The thread only forks and waits, so its lowered priority slows nothing
// else, and it is never lowered further or raised. It watches its children
// through pidfds (pidfd_open(2), Linux 5.3) and ends, retired by the runtime
// like any lowered thread, once none runs and no Start waits: nothing stays
// while no such child runs. A child that exited but is not yet reaped is
// reparented to another thread of the process (kernel/exit.c,
// find_new_reaper), where cmd.Wait still finds it (wait(2): a thread waits
// for the children of the other threads of its group). Without pidfds the
// spawner stays until the process ends. Commands without Pdeathsig keep the
// fresh thread of startAt: they fork in parallel, where one spawner
// starts its commands one after another (bench/README.md has what that costs).
type spawner struct {
	wake int // eventfd(2): written by Start under spawners.mu, read by run

	// Fields below are protected by spawners.mu.
	queue []spawnReq
}

type spawnReq struct {
	cmd   *exec.Cmd
	work  func() error   // starts cmd (cmd.Start, and the steps at its exec)
	reply chan<- outcome // buffered, 1
}

var spawners struct {
	mu        sync.Mutex // protects bySetting and each spawner's queue
	bySetting map[setting]*spawner
}

// startOnSpawner runs work, which starts cmd, on the spawner thread for
// fork setting s, starting that spawner if none runs, and returns work's
// error. A panic in work is raised again here.
func startOnSpawner(cmd *exec.Cmd, s setting, work func() error) error {
	reply := make(chan outcome, 1)
	if err := enqueue(s, spawnReq{cmd: cmd, work: work, reply: reply}); err != nil {
		return err
	}
	o := <-reply
	if o.panicked {
		panic(o.value)
	}
	return o.err
}

// enqueue queues req on the spawner for s and wakes it. The write to its
// eventfd happens under spawners.mu, so the spawner, which ends only under
// that lock with an empty queue, cannot have closed it.
func enqueue(s setting, req spawnReq) error {
	spawners.mu.Lock()
	defer spawners.mu.Unlock()
	sp := spawners.bySetting[s]
	if sp == nil {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return fmt.Errorf("qos: eventfd for the Pdeathsig spawner: %w", err)
		}
		sp = &spawner{wake: fd}
		if spawners.bySetting == nil {
			spawners.bySetting = make(map[setting]*spawner)
		}
		spawners.bySetting[s] = sp
		go sp.run(s, nil)
	}
	sp.queue = append(sp.queue, req)
	_, err := unix.Write(sp.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	if errors.Is(err, unix.EAGAIN) {
		err = nil // the counter is full: the spawner is awake anyway
	}
	return err
}

// run is the spawner's goroutine. It locks its thread for good and lowers
// it, then serves the queue and waits for its children until both are
// empty. It returns still locked, so the runtime retires the lowered thread.
// On the main thread, which must never be lowered (see lowered in
// thread.go), it moves to a nested goroutine and holds the main thread until
// that one has locked a thread of its own (locked, when not nil, is closed
// then).
func (sp *spawner) run(s setting, locked chan<- struct{}) {
	runtime.LockOSThread()
	if isMainThread() {
		inner := make(chan struct{})
		go sp.run(s, inner)
		<-inner
		runtime.UnlockOSThread()
		return
	}
	if locked != nil {
		close(locked)
	}
	kids := &children{}
	defer kids.close()
	if err := s.apply(unix.Gettid()); err != nil {
		sp.fail(s, err)
		return
	}
	for {
		reqs, done := sp.take(s, kids)
		if done {
			return
		}
		for _, r := range reqs {
			o := startRecovered(r.work)
			if o.err == nil && !o.panicked {
				kids.add(r.cmd.Process.Pid) // the app's own cmd: the holder forks no Pdeathsig command
			}
			r.reply <- o
		}
		if len(reqs) == 0 {
			kids.wait(sp.wake)
		}
	}
}

// take returns the queued requests, or done (after removing the spawner and
// closing its eventfd) when there are none and no child runs.
func (sp *spawner) take(s setting, kids *children) (reqs []spawnReq, done bool) {
	spawners.mu.Lock()
	defer spawners.mu.Unlock()
	reqs, sp.queue = sp.queue, nil
	if len(reqs) > 0 || !kids.empty() {
		return reqs, false
	}
	delete(spawners.bySetting, s)
	_ = unix.Close(sp.wake)
	return nil, true
}

// fail answers every queued request with err and removes the spawner, whose
// thread could not be lowered: the next Start tries a new one.
func (sp *spawner) fail(s setting, err error) {
	spawners.mu.Lock()
	defer spawners.mu.Unlock()
	for _, r := range sp.queue {
		r.reply <- outcome{err: err}
	}
	sp.queue = nil
	delete(spawners.bySetting, s)
	_ = unix.Close(sp.wake)
}

// startRecovered calls work, turning a panic into an outcome so that the
// spawner survives it.
func startRecovered(work func() error) (o outcome) {
	defer func() {
		if v := recover(); v != nil {
			o = outcome{panicked: true, value: v}
		}
	}()
	return outcome{err: work()}
}

// children are the running children of a spawner, each watched through a
// pidfd. A child whose pidfd could not be opened (a kernel before 5.3)
// cannot be watched: the spawner then keeps running until the process ends.
type children struct {
	pidfds    []pidfd
	unwatched bool
}

func (c *children) add(pid int) {
	fd := openPidfd(pid)
	if fd.fd < 0 {
		c.unwatched = true
		return
	}
	c.pidfds = append(c.pidfds, fd)
}

func (c *children) empty() bool { return len(c.pidfds) == 0 && !c.unwatched }

// wait blocks until the eventfd wake is written or a child exits, and drops
// the children that exited.
func (c *children) wait(wake int) {
	fds := make([]unix.PollFd, 0, 1+len(c.pidfds))
	fds = append(fds, unix.PollFd{Fd: int32(wake), Events: unix.POLLIN})
	for _, p := range c.pidfds {
		fds = append(fds, unix.PollFd{Fd: int32(p.fd), Events: unix.POLLIN})
	}
	if _, err := unix.Poll(fds, -1); err != nil {
		return // EINTR: the caller looks at its queue and comes back
	}
	if fds[0].Revents != 0 {
		var buf [8]byte
		_, _ = unix.Read(wake, buf[:])
	}
	live := c.pidfds[:0]
	for i, p := range c.pidfds {
		if fds[1+i].Revents != 0 {
			p.close()
			continue
		}
		live = append(live, p)
	}
	c.pidfds = live
}

func (c *children) close() {
	for _, p := range c.pidfds {
		p.close()
	}
	c.pidfds = nil
}
