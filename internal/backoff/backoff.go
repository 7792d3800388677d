// Package backoff spaces out the tries of something that keeps failing: a
// save on a full disk (statefile), a read of a file not readable yet
// (drafts, anchors). The wait after the first failure in a row is First,
// twice as long after each next one, and never longer than Max, so a
// failure that lasts costs one try every Max and one that passes is tried
// again soon. A Timer arms one time.AfterFunc at a time and runs no
// goroutine while nothing is armed.
package backoff

import (
	"sync"
	"time"
)

// Timer calls a function once the wait its run of failures calls for has
// passed. Its owner's lock guards it: Failed, Succeeded, Arm and Stop are
// called with that lock held. The zero Timer, with First and Max set, is
// ready to use.
type Timer struct {
	First, Max time.Duration // the first wait and the longest; set before use

	fails int         // failures in a row
	t     *time.Timer // the armed wait, if any
	gen   uint64      // bumped by each Arm and Stop, so a wait that ended late does nothing
}

// Failed counts one more failure in a row.
func (b *Timer) Failed() { b.fails++ }

// Succeeded ends the run of failures: the next wait is First again.
func (b *Timer) Succeeded() { b.fails = 0 }

// Delay is the wait that the failures in a row so far call for.
func (b *Timer) Delay() time.Duration {
	n := max(b.fails, 1) - 1
	if n > 30 || b.First<<n > b.Max || b.First<<n <= 0 {
		return b.Max
	}
	return b.First << n
}

// Arm stops the wait armed before, if any, and arms one of Delay; when it
// ends, fn runs on the timer's goroutine with l held, unless Arm or Stop
// was called since. l is the owner's lock.
func (b *Timer) Arm(l sync.Locker, fn func()) {
	b.Stop()
	gen := b.gen
	b.t = time.AfterFunc(b.Delay(), func() {
		l.Lock()
		defer l.Unlock()
		if b.gen == gen {
			b.t = nil
			fn()
		}
	})
}

// Stop stops the armed wait: its fn will not run.
func (b *Timer) Stop() {
	b.gen++
	if b.t != nil {
		b.t.Stop()
		b.t = nil
	}
}
