package stall

import (
	"context"
	rtrace "runtime/trace"
)

// The Frame marks, as user log events in the execution trace: on the
// watched goroutine's own timeline, ordered with its waits, and visible
// in `go tool trace` when the app records a trace of its own.
const (
	markCategory = "offmain/stall"
	markStart    = "frame start"
	markEnd      = "frame end"
)

// Frame marks the start of a frame, or of the handling of one event, on
// the watched goroutine, and returns the function that marks its end:
//
//	defer stall.Frame()()
//
// Once the goroutine has made a mark, its waits outside frames are its
// idle wait and never reported, and those inside are held to the budget
// each. Before the first mark, idle waits are recognised by their call
// site (see [Options.Idle]), except in the second or so before it: the
// watcher reads the trace a second at a time, and a mark makes the whole
// second's waits outside frames idle, the wait for the app's first event
// among them. Marks nest; marks made on other goroutines are ignored.
// When nothing is watched, Frame costs one atomic load and returns a
// function that does nothing.
func Frame() (end func()) {
	if current.Load() == nil {
		return nop
	}
	return frameStart()
}

// frameStart is Frame's work while watching, out of line so that Frame
// itself inlines into its callers.
//
//go:noinline
func frameStart() func() {
	rtrace.Log(context.Background(), markCategory, markStart)
	return frameEnd
}

func frameEnd() {
	if current.Load() != nil {
		rtrace.Log(context.Background(), markCategory, markEnd)
	}
}

func nop() {}
