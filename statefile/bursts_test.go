package statefile

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
)

// A burst of events is reported once, settleQuiet after its last event,
// with the final content.
func TestWatchSettlesBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, osPath("/state/w.json"))
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		for i, v := range []string{`""`, `"ha`, `"half"`, `"final"`} { // truncate, write, write, write
			if i > 0 {
				elapse(50 * time.Millisecond)
			}
			r.external(osPath("/state/w.json"), v+"\n", fsnotify.Write)
		}
		elapse(settleQuiet - time.Millisecond)
		assert.Empty(t, c.take(), "reported before the burst was quiet for settleQuiet")
		elapse(time.Millisecond)
		assert.Equal(t, []call{{"final", nil, 150*time.Millisecond + settleQuiet}}, c.take())
		elapse(5 * time.Second)
		assert.Empty(t, c.take(), "reported twice")
	})
}

// A path that never goes quiet is still checked every settleMax.
func TestWatchBoundsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newWatchRig(t)
		f, _ := Open[string](r.s, osPath("/state/busy.json"))
		c := newCalls()
		stop := watchT(t, f, c)
		defer stop()
		for i := range 84 { // 2.5 s of events 30 ms apart, none at a check's instant
			r.external(osPath("/state/busy.json"), `"`+strconv.Itoa(i)+"\"\n", fsnotify.Write)
			elapse(30 * time.Millisecond)
		}
		// The first burst starts at 0 and is checked at 1 s (last event:
		// 990 ms, #33); the second starts at 1020 ms and is checked at
		// 2020 ms (#67); the last goes quiet after #83 at 2490 ms.
		elapse(settleQuiet)
		assert.Equal(t, []call{
			{"33", nil, settleMax},
			{"67", nil, 1020*time.Millisecond + settleMax},
			{"83", nil, 2490*time.Millisecond + settleQuiet},
		}, c.take())
	})
}

// The settler's rules, without a clock.
func TestSettler(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name  string
		pokes map[string][]int // path -> event times (ms)
		now   int
		due   []string
		next  int // ms; -1: nothing waits
	}{
		{"nothing", nil, 0, nil, -1},
		{"quiet not reached", map[string][]int{"a": {0, 50}}, 149, nil, 150},
		{"quiet reached", map[string][]int{"a": {0, 50}}, 150, []string{"a"}, -1},
		{"max reached", map[string][]int{"a": {0, 90, 180, 270, 360, 450, 540, 630, 720, 810, 900, 990}}, 1000, []string{"a"}, -1},
		{"per path, sorted", map[string][]int{"b": {0}, "a": {10}, "c": {90}}, 110, []string{"a", "b"}, 190},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newBursts(100*time.Millisecond, time.Second)
			for p, times := range tc.pokes {
				for _, ms := range times {
					st.poke(p, at(ms))
				}
			}
			assert.Equal(t, tc.due, st.due(at(tc.now)))
			next, ok := st.next()
			if tc.next < 0 {
				assert.False(t, ok, "next: got %v", next)
			} else {
				assert.Equal(t, at(tc.next), next)
			}
		})
	}
}
