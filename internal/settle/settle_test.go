package settle

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// advance moves the bubble's fake clock forward by d and returns once every
// goroutine the move woke has finished or blocked again. Inside a synctest
// bubble this takes no real time: the runtime jumps the clock to the timer.
func advance(t *testing.T, d time.Duration) {
	t.Helper()
	tm := time.NewTimer(d)
	defer tm.Stop()
	<-tm.C
	synctest.Wait()
}

// recorder is a callback that notes when it ran, as offsets from start.
type recorder struct {
	start time.Time
	mu    sync.Mutex // protects at
	at    []time.Duration
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Since(r.start))
}

func (r *recorder) fires() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.at...)
}

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, n := range v {
		out[i] = time.Duration(n) * time.Millisecond
	}
	return out
}

// every returns the offsets 0, step, 2*step, ... below until, in ms.
func every(step, until int) []int {
	var v []int
	for at := 0; at < until; at += step {
		v = append(v, at)
	}
	return v
}

var scheduleTests = []struct {
	name  string
	opts  Options
	marks []int // ms after start
	want  []time.Duration
}{
	{"defaults fire 300ms after one edit", Options{}, []int{0}, ms(300)},
	{"each edit restarts the settle window", Options{}, []int{0, 100, 200}, ms(500)},
	{"two bursts fire twice", Options{}, []int{0, 100, 1000, 1100}, ms(400, 1400)},
	{"continuous typing fires at max wait", Options{},
		every(30, 5000), ms(2000, 4010, 5280)},
	{"custom settle and max wait", Options{Settle: 10 * time.Millisecond, MaxWait: 25 * time.Millisecond},
		every(4, 60), ms(25, 53, 66)},
	{"max wait below settle caps every fire", Options{Settle: time.Second, MaxWait: 100 * time.Millisecond},
		[]int{0, 300}, ms(100, 400)},
	{"negative values mean defaults", Options{Settle: -1, MaxWait: -1}, []int{0}, ms(300)},
}

// TestSchedule drives marks at fixed offsets and checks the exact fire times.
func TestSchedule(t *testing.T) {
	for _, tt := range scheduleTests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRecorder()
				s := New(tt.opts, r.fire)
				defer s.Stop()
				now := 0
				for _, at := range tt.marks {
					if at > now {
						advance(t, time.Duration(at-now)*time.Millisecond)
						now = at
					}
					s.Mark()
				}
				advance(t, 10*time.Second)
				assert.Equal(t, tt.want, r.fires(), "fire times: got, want")
				assert.False(t, s.Pending(), "pending after all fired")
			})
		})
	}
}

func TestNotBeforeSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		s := New(Options{}, r.fire)
		defer s.Stop()
		s.Mark()
		advance(t, 299*time.Millisecond)
		assert.Empty(t, r.fires(), "fired before the settle window ended")
		assert.True(t, s.Pending(), "edit should still be pending")
		advance(t, time.Millisecond)
		assert.Equal(t, ms(300), r.fires())
	})
}

func TestFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		s := New(Options{}, r.fire)
		defer s.Stop()

		assert.False(t, s.Flush(), "Flush with nothing pending: got true, want false")
		assert.Empty(t, r.fires())

		advance(t, 50*time.Millisecond)
		s.Mark()
		assert.True(t, s.Flush(), "Flush with an edit pending: got false, want true")
		assert.Equal(t, ms(50), r.fires(), "Flush must run the callback before returning")
		assert.False(t, s.Pending())

		advance(t, 10*time.Second)
		assert.Equal(t, ms(50), r.fires(), "the timer must not fire again for a flushed edit")

		s.Mark() // at 10.05s: a new cycle after a Flush still settles normally
		advance(t, 10*time.Second)
		assert.Equal(t, ms(50, 10350), r.fires())
	})
}

func TestFlushThenEditStartsNewMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		s := New(Options{}, r.fire)
		defer s.Stop()
		for range 21 {
			s.Mark() // every 70ms from 0 to 1.4s: no pause, no fire
			advance(t, 70*time.Millisecond)
		}
		advance(t, 30*time.Millisecond)
		s.Flush() // at 1.5s
		advance(t, 10*time.Millisecond)
		for range 40 {
			s.Mark() // every 70ms from 1.51s to 4.24s
			advance(t, 70*time.Millisecond)
		}
		advance(t, 10*time.Second)
		// The first unsaved edit after the Flush is at 1.51s, so max wait ends
		// at 3.51s, not at 2s (which the edit before the Flush would give).
		// The next edit, at 3.54s, settles 300ms after the last, at 4.24s.
		// (No mark falls on a fire time, so the order of the two is fixed.)
		assert.Equal(t, ms(1500, 3510, 4540), r.fires())
	})
}

func TestStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		s := New(Options{}, r.fire)
		s.Mark()
		advance(t, 100*time.Millisecond)
		assert.True(t, s.Stop(), "Stop with an edit pending: got false, want true")
		advance(t, 10*time.Second)
		assert.Empty(t, r.fires(), "fired after Stop")

		s.Mark()
		assert.False(t, s.Pending(), "Mark after Stop must not mark")
		assert.False(t, s.Flush(), "Flush after Stop: got true, want false")
		advance(t, 10*time.Second)
		assert.Empty(t, r.fires(), "fired after Stop")
		assert.False(t, s.Stop(), "second Stop: got true, want false")
	})
}

// TestMarkDuringCallback: an edit marked while the callback runs (after it
// copied the state it saves) is not lost: the callback fires again, Settle
// after that edit.
func TestMarkDuringCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		release := make(chan struct{})
		var calls atomic.Int32
		s := New(Options{}, func() {
			r.fire()
			if calls.Add(1) == 1 {
				<-release // a slow first callback
			}
		})
		defer s.Stop()
		s.Mark()
		advance(t, 300*time.Millisecond) // the first callback runs, and blocks
		s.Mark()                         // an edit while it runs
		advance(t, 100*time.Millisecond)
		close(release)
		advance(t, 10*time.Second)
		assert.Equal(t, ms(300, 600), r.fires(), "fire times: got, want a second fire for the edit made during the first")
		assert.False(t, s.Pending())
	})
}

// TestClose: Close runs the pending edit's callback at once, then nothing
// fires or runs again.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		s := New(Options{}, r.fire)
		s.Mark()
		advance(t, 100*time.Millisecond)
		assert.True(t, s.Close(), "Close with an edit pending: got false, want true")
		assert.Equal(t, ms(100), r.fires(), "Close must run the callback before returning")
		advance(t, 10*time.Second)
		assert.Equal(t, ms(100), r.fires(), "fired after Close")

		s.Mark()
		assert.False(t, s.Pending(), "Mark after Close must not mark")
		assert.False(t, s.Flush(), "Flush after Close: got true, want false")
		assert.False(t, s.Close(), "second Close: got true, want false")
		assert.False(t, s.Stop(), "Stop after Close: got true, want false")
		advance(t, 10*time.Second)
		assert.Equal(t, ms(100), r.fires(), "fired after Close")

		idle := New(Options{}, r.fire)
		assert.False(t, idle.Close(), "Close with nothing pending: got true, want false")
		idle.Mark()
		advance(t, 10*time.Second)
		assert.Equal(t, ms(100), r.fires(), "an idle Scheduler fired after Close")
	})
}

func TestStopIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		s := New(Options{}, r.fire)
		assert.False(t, s.Stop(), "Stop of a never-marked scheduler: got true, want false")
		s.Mark()
		advance(t, 10*time.Second)
		assert.Empty(t, r.fires())
	})
}

// TestConcurrent marks and flushes from many goroutines; the last callback
// must have seen every mark (run with -race).
func TestConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var marked, seen, calls atomic.Int64
		s := New(Options{Settle: 3 * time.Millisecond, MaxWait: 10 * time.Millisecond}, func() {
			calls.Add(1)
			seen.Store(marked.Load())
		})
		defer s.Stop()
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					marked.Add(1)
					s.Mark()
					if (i+g)%50 == 0 {
						s.Flush()
					}
					if i%10 == 0 {
						tm := time.NewTimer(time.Millisecond) // fake time: lets timers fire between marks
						<-tm.C
					}
				}
			})
		}
		wg.Wait()
		advance(t, time.Second)
		assert.Equal(t, int64(8*200), seen.Load(), "marks covered by the last callback: got, want")
		assert.False(t, s.Pending())
		assert.Greater(t, calls.Load(), int64(1))
	})
}

// TestBurstDue checks the rule by itself, without a clock: due Settle after
// the latest edit, but no later than MaxWait after the first.
func TestBurstDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		opts  Options
		edits []int // ms after t0
		want  int   // ms after t0
	}{
		{"one edit: settle after it", Options{}, []int{0}, 300},
		{"settle after the latest edit", Options{}, []int{0, 100, 250}, 550},
		{"capped by max wait after the first", Options{}, every(100, 2500), 2000},
		{"max wait below settle", Options{Settle: time.Second, MaxWait: 100 * time.Millisecond}, []int{0}, 100},
		{"custom", Options{Settle: 100 * time.Millisecond, MaxWait: time.Second}, []int{0, 50}, 150},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b Burst
			assert.True(t, b.Empty(), "zero Burst: got not empty")
			for _, at := range tt.edits {
				b.Add(t0.Add(time.Duration(at) * time.Millisecond))
			}
			assert.False(t, b.Empty(), "after Add: got empty")
			assert.Equal(t, t0.Add(time.Duration(tt.want)*time.Millisecond), b.Due(tt.opts), "due: got, want")
		})
	}
}
