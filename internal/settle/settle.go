// Package settle schedules one callback after a burst of edits: it fires once
// the edits pause for a settle window, but never later than a maximum wait
// after the first edit that has not been saved yet. It is the one scheduler
// that the drafts and anchors packages share.
//
// The rule itself is [Burst.Due], a pure function of the burst's first and
// latest edit: statefile's watch loop applies it to bursts of file events,
// one per watched path, on its own clock and goroutine.
//
// A [Scheduler] keeps no goroutine while idle: it owns one [time.AfterFunc]
// timer, which is re-armed at most once per pause rather than on every edit,
// so [Scheduler.Mark] costs a mutex, a clock read and no allocation. The
// callback runs on the timer's goroutine, or on the goroutine that calls
// [Scheduler.Flush] or [Scheduler.Close]; two calls of it never overlap.
//
// Chromium's ImportantFileWriter (base/files/important_file_writer.cc,
// kDefaultCommitInterval = 10 s) and Firefox's JSONFile
// (toolkit/modules/JSONFile, kSaveDelayMs = 1500) coalesce with one fixed
// window. This scheduler adds pause detection, so a save follows a finished
// edit quickly, and the cap, so continuous typing still saves.
package settle

import (
	"sync"
	"time"
)

// Defaults used when an [Options] field is zero or negative.
const (
	DefaultSettle  = 300 * time.Millisecond
	DefaultMaxWait = 2 * time.Second
)

// Options configure a [Scheduler]. The zero value means all defaults.
type Options struct {
	// Settle is how long edits must pause before the callback fires.
	// Zero or negative: DefaultSettle (300ms).
	Settle time.Duration
	// MaxWait caps the delay between the first unsaved edit and the
	// callback, so a stream of edits that never pauses still fires.
	// Zero or negative: DefaultMaxWait (2s).
	MaxWait time.Duration
}

// withDefaults returns o with its zero or negative fields set to the
// defaults.
func (o Options) withDefaults() Options {
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	return o
}

// Burst is a run of edits that no callback has covered yet: when its first
// and its latest edit happened. The zero Burst holds no edit. A Burst reads
// no clock and does no I/O, so the rule it carries can be applied to any
// stream of times, and tested without timers. It is not safe for concurrent
// use; its owner guards it.
type Burst struct {
	first, last time.Time
}

// Add records an edit at the time at, which must not be the zero time.
func (b *Burst) Add(at time.Time) {
	if b.first.IsZero() {
		b.first = at
	}
	b.last = at
}

// Empty reports whether b holds no edit.
func (b Burst) Empty() bool { return b.first.IsZero() }

// Due returns when b's edits must be acted on under o: o.Settle after the
// latest edit, but no later than o.MaxWait after the first (zero or
// negative fields mean the defaults, as for [New]). b must not be empty.
func (b Burst) Due(o Options) time.Time {
	o = o.withDefaults()
	settled := b.last.Add(o.Settle)
	if capped := b.first.Add(o.MaxWait); capped.Before(settled) {
		return capped
	}
	return settled
}

// Scheduler fires a callback after edits settle. Its methods are safe for
// concurrent use from any goroutine, except that the callback itself must not
// call [Scheduler.Flush], [Scheduler.Close] or [Scheduler.Stop] (they wait
// for it).
type Scheduler struct {
	fn    func()
	opts  Options       // with the defaults filled in
	first time.Duration // delay for the first edit of a burst: min(Settle, MaxWait)

	// fireMu is held for the whole of every callback and while Flush, Close
	// and Stop decide, so a Flush that returns has seen any concurrent fire
	// (Close's last one included) complete, and nothing fires after Close or
	// Stop returns. Order: fireMu, then mu.
	fireMu sync.Mutex

	mu      sync.Mutex  // protects the fields below
	t       *time.Timer // created by the first Mark; its callback is tick
	armed   bool        // t is pending or tick is about to look at the state
	burst   Burst       // the edits marked since the callback last ran; empty: none pending
	stopped bool        // Stop was called; Mark and Flush do nothing
}

// New returns a Scheduler that calls fn when edits settle. fn must not be
// nil; it runs with no Scheduler lock held except the one that keeps two
// calls of it from overlapping.
func New(opts Options, fn func()) *Scheduler {
	if fn == nil {
		panic("settle: nil callback")
	}
	opts = opts.withDefaults()
	return &Scheduler{fn: fn, opts: opts, first: min(opts.Settle, opts.MaxWait)}
}

// Mark records an edit. The callback fires Settle after the last of a burst
// of marks, or MaxWait after the first mark it has not yet covered, whichever
// is sooner. Mark never blocks on the callback and does not allocate (after
// the first call, which creates the timer). After Stop it does nothing.
func (s *Scheduler) Mark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.burst.Add(time.Now())
	if s.armed {
		// tick will find the burst's later edit and re-arm for the remainder:
		// one timer operation per pause, not one per keystroke.
		return
	}
	// Not armed means no edit was pending before this one (tick and Flush
	// disarm only when they empty the burst), so this edit starts it.
	s.armed = true
	if s.t == nil {
		s.t = time.AfterFunc(s.first, s.tick)
		return
	}
	s.t.Reset(s.first)
}

// tick is the timer's callback: fire if the edits are due, else re-arm for
// the time left.
func (s *Scheduler) tick() {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	s.mu.Lock()
	if s.stopped || s.burst.Empty() {
		s.armed = false
		s.mu.Unlock()
		return
	}
	if left := time.Until(s.burst.Due(s.opts)); left > 0 {
		s.t.Reset(left)
		s.mu.Unlock()
		return
	}
	s.armed = false
	s.burst = Burst{}
	s.mu.Unlock()
	s.fn()
}

// Flush runs the callback now, on the calling goroutine, if an edit is
// pending, and reports whether it did. If the timer is firing at the same
// moment, Flush waits for that callback to finish first, so when Flush
// returns every edit marked before it was called has been covered by a
// completed callback. After Stop it does nothing and returns false.
func (s *Scheduler) Flush() bool {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	s.mu.Lock()
	if s.stopped || s.burst.Empty() {
		s.mu.Unlock()
		return false
	}
	s.burst = Burst{}
	if s.t.Stop() {
		s.armed = false
	}
	s.mu.Unlock()
	s.fn()
	return true
}

// Close runs the callback now, on the calling goroutine, if an edit is
// pending, and disables the Scheduler for good, in one step under the lock
// that Flush waits on: a [Scheduler.Flush] called meanwhile returns only
// after that last callback, never with the edit taken but not yet handed on
// (which a Stop followed by the owner's own save would allow). It reports
// whether the callback ran. After Close, Mark, Flush, Close and Stop do
// nothing.
func (s *Scheduler) Close() bool {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	if !s.stopLocked() {
		return false
	}
	s.fn()
	return true
}

// Stop cancels any pending fire and disables the Scheduler for good: once
// Stop returns the callback is not running and will not run again. It reports
// whether an edit was pending, which it drops ([Scheduler.Close] runs it). A
// second Stop returns false.
func (s *Scheduler) Stop() (pending bool) {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	return s.stopLocked()
}

// stopLocked disables the Scheduler and reports whether an edit was pending.
// Caller holds fireMu.
func (s *Scheduler) stopLocked() (pending bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pending = !s.burst.Empty() && !s.stopped
	s.stopped = true
	s.burst = Burst{}
	s.armed = false
	if s.t != nil {
		s.t.Stop()
	}
	return pending
}

// Pending reports whether an edit has been marked that no callback has
// covered yet.
func (s *Scheduler) Pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.burst.Empty()
}
