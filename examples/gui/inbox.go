package main

import "sync"

// inbox carries messages from other goroutines (agents, statefile's error
// callback, signals) to the UI goroutine. post never blocks: it appends and
// wakes the window with app.Window.Invalidate, which Gio documents as safe
// for concurrent use; the UI goroutine takes the messages at its next event.
// A post that waited for the UI goroutine instead (a channel send, Fyne's
// fyne.DoAndWait) deadlocks when that goroutine is itself waiting for the
// poster, as it does at quit while it stops the agents whose output is being
// posted.
type inbox struct {
	wake func() // app.Window.Invalidate; called under mu so that close waits for it

	mu     sync.Mutex // protects msgs and closed
	msgs   []any
	closed bool
}

// post queues m for the UI goroutine; after close it drops m.
func (b *inbox) post(m any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.msgs = append(b.msgs, m)
	if len(b.msgs) == 1 && b.wake != nil {
		b.wake()
	}
}

// take returns the queued messages, oldest first.
func (b *inbox) take() []any {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.msgs
	b.msgs = nil
	return m
}

// close drops later posts. The window calls it before it is destroyed, so
// that no post wakes a window that is gone.
func (b *inbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.msgs = nil
}
