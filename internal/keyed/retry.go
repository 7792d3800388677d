package keyed

import (
	"time"
)

// The read after Open that failed for a reason that may pass (a directory
// not readable yet, EIO, a network home not mounted yet) is tried again:
// RetryFirst after the failure, then twice as long after each failure in a
// row, up to RetryMax (internal/backoff); also at once when an edit's save
// comes due and at every Flush and Close with an edit unsaved. Each try is
// one read of the file on its statefile writer, one at a time: on a disk
// that stays unreadable, about one open(2) every 30 s once the backoff has
// grown, plus one per settled edit.
const (
	RetryFirst = 250 * time.Millisecond
	RetryMax   = 30 * time.Second
)

// startReadLocked starts a read of the file on a goroutine of its own
// unless one is under way, and returns the channel closed when that read
// ends. Once the file has been merged it starts none and returns loadDone.
// Caller holds mu.
func (c *Core[T]) startReadLocked() <-chan struct{} {
	if c.loaded {
		return c.loadDone
	}
	if c.reading == nil {
		c.reading = make(chan struct{})
		c.readsStarted++
		c.retry.Stop() // this read replaces the timed one
		go c.read(c.reading)
	}
	return c.reading
}

// armRetryLocked arms the timed read after a failed one, unless Close has
// run. Caller holds mu.
func (c *Core[T]) armRetryLocked() {
	if c.stopped {
		return
	}
	c.retry.Failed()
	c.retry.Arm(c.mu, func() { c.startReadLocked() })
}

// stopRetry ends the timed reads, for Close: a read under way still ends
// when statefile answers it, and Flush still reads at once.
func (c *Core[T]) stopRetry() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.retry.Stop()
}
