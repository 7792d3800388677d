// Package fakefile is a test harness: an in-memory stand-in for a
// statefile.File[T], for the tests of a package that saves through one
// (drafts, anchors). It records each Save and Remove with the time it was
// called, so that a test in a testing/synctest bubble can check when a
// Store queues its saves; it can hold Load on a gate, fail Load, Save or
// Watch, and deliver a change to the running watch as statefile's watch
// goroutine would.
package fakefile

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Op is one call of [File.Save] or [File.Remove].
type Op[T any] struct {
	At     time.Duration // time.Since(File.Start) at the call
	Remove bool          // a Remove; Value is then the zero T
	// Value is the very value Save was handed: its maps and slices are
	// the caller's, so a test can check that they never change afterwards.
	Value T
}

// File is a fake statefile.File[T]. Set its exported fields before the
// File is first used; they are not guarded. Its methods are safe for
// concurrent use. The zero File loads the zero T, saves without error and
// watches nothing until Watch is called.
type File[T any] struct {
	Start     time.Time     // Op.At counts from it; set it inside the bubble
	Name      string        // returned by Path
	LoadValue T             // returned by Load and LoadContext
	LoadErr   error         // returned by Load and LoadContext
	Gate      chan struct{} // if non-nil, a load waits until it is closed
	WatchErr  error         // returned by Watch, which then keeps no fn

	mu      sync.Mutex // protects the fields below
	saveErr error
	ops     []Op[T]
	flushes []int // len(ops) at each Flush
	loads   int
	watchFn func(T, error)
	watches int // Watch calls
	stops   int // calls of the stop functions Watch returned
}

// Path returns f.Name.
func (f *File[T]) Path() string { return f.Name }

// Load counts the load, waits for f.Gate to close if it is set,
// and returns f.LoadValue and f.LoadErr; or ctx.Err() if ctx ends first.
func (f *File[T]) Load(ctx context.Context) (T, error) {
	f.mu.Lock()
	f.loads++
	f.mu.Unlock()
	if f.Gate != nil {
		select {
		case <-f.Gate:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
	return f.LoadValue, f.LoadErr
}

// Save records v and returns the error set by [File.SetSaveErr].
func (f *File[T]) Save(v T) error { return f.record(Op[T]{Value: v}) }

// Remove records a removal and returns the error set by [File.SetSaveErr].
func (f *File[T]) Remove() error { return f.record(Op[T]{Remove: true}) }

func (f *File[T]) record(op Op[T]) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	op.At = time.Since(f.Start)
	f.ops = append(f.ops, op)
	return f.saveErr
}

// SetSaveErr sets what Save and Remove return from now on (nil: success).
func (f *File[T]) SetSaveErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saveErr = err
}

// Flush records how many saves and removes had been queued, and returns nil.
func (f *File[T]) Flush(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushes = append(f.flushes, len(f.ops))
	return nil
}

// Ops returns a copy of the saves and removes so far, oldest first.
func (f *File[T]) Ops() []Op[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Op[T](nil), f.ops...)
}

// Flushes returns, for each Flush so far, how many saves and removes had
// been queued when it was called.
func (f *File[T]) Flushes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.flushes...)
}

// Loads returns how many loads have started.
func (f *File[T]) Loads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads
}

// Watch counts the call and returns f.WatchErr if it is set; otherwise it
// keeps fn for [File.Deliver] until the returned stop is called.
func (f *File[T]) Watch(fn func(T, error)) (stop func(), err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watches++
	if f.WatchErr != nil {
		return nil, f.WatchErr
	}
	f.watchFn = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stops++
		f.watchFn = nil
	}, nil
}

// Deliver calls the running watch's fn with v and err, as statefile does
// when another process changes the file, and returns when fn does. It
// fails the test if no watch is running.
func (f *File[T]) Deliver(t testing.TB, v T, err error) {
	t.Helper()
	f.mu.Lock()
	fn := f.watchFn
	f.mu.Unlock()
	if fn == nil {
		t.Fatal("fakefile: Deliver: no watch running")
	}
	fn(v, err)
}

// Watches returns how many times Watch was called.
func (f *File[T]) Watches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watches
}

// Stops returns how many times a stop returned by Watch was called.
func (f *File[T]) Stops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stops
}
