//go:build linux || darwin || windows

package qos

import "runtime"

// lowerFunc lowers the calling OS thread. The restore it returns puts the
// thread back; it is nil where the thread cannot be put back (Linux: an
// unprivileged thread cannot raise its nice value again) or when lowering
// failed part way, and then the thread is retired.
type lowerFunc func() (restore func() error, err error)

// outcome carries the result of work done on a lowered thread back to the
// caller: an error, or the value of a panic to raise again, and whether the
// call landed on the main thread and moved off it.
type outcome struct {
	err      error
	panicked bool
	value    any
	hopped   bool
}

// runLowered runs work on an OS thread lowered by lower, on a fresh
// goroutine, and returns when work returns. A panic in work is raised again
// here.
func runLowered(lower lowerFunc, work func() error) error {
	o := lowerAndRun(lower, work)
	if o.panicked {
		panic(o.value)
	}
	return o.err
}

// lowerAndRun runs work as runLowered does and returns its outcome.
func lowerAndRun(lower lowerFunc, work func() error) outcome {
	res := make(chan outcome, 1)
	go lowered(lower, work, res)
	return <-res
}

// lowered is runLowered's goroutine. It locks its thread before lowering it:
// the runtime never copies a locked thread into a new one (newm asks its
// template thread to create threads, runtime/proc.go), and the first
// LockOSThread starts that template thread from a thread still unlowered.
// Unless restore puts the thread back, the goroutine exits still locked, and
// the runtime terminates the thread (runtime.LockOSThread: "If the calling
// goroutine exits without unlocking the thread, the thread will be
// terminated").
//
// The main thread is the exception: mexit wedges it instead of terminating it
// (runtime/proc.go), so a lowered main thread would stay lowered, parked,
// forever. On the main
// thread, lowered keeps it locked, so the nested goroutine cannot land on it,
// does the work on a nested goroutine, then unlocks.
func lowered(lower lowerFunc, work func() error, res chan<- outcome) {
	runtime.LockOSThread()
	if isMainThread() {
		inner := make(chan outcome, 1)
		go lowered(lower, work, inner)
		o := <-inner
		o.hopped = true
		runtime.UnlockOSThread()
		res <- o
		return
	}
	var (
		o       outcome
		restore func() error
	)
	defer func() {
		if v := recover(); v != nil {
			o = outcome{panicked: true, value: v}
		}
		if restore != nil && restore() == nil {
			runtime.UnlockOSThread()
		}
		res <- o
	}()
	if restore, o.err = lower(); o.err == nil {
		o.err = work()
	}
}
