package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offmain/offmain/stall"
)

// uiFiles are the files the ui loops save, by loop.
var uiFiles = map[string]string{uiSync: "ui sync.json", uiStatefile: "ui statefile.json"}

// stallPlan is what stall does in each quarter of a round's window: ""
// is off, a ui loop's key is watching that loop (stall watches one
// goroutine at a time, and runs one flight recorder per process). Off and
// on take half the window each, in the order off-on-on-off in the first,
// third, … round and on-off-off-on in the others: in either order both
// halves sit at the same mean time in the window, so a load that grows or
// eases steadily through it weighs on both alike.
func stallPlan(round int) [4]string {
	if round%2 == 0 {
		return [4]string{"", uiSync, uiStatefile, ""}
	}
	return [4]string{uiStatefile, "", "", uiSync}
}

// stallSwitch turns stall on and off through one window as its plan says,
// and counts the reports of each ui loop it watched. Its run goroutine
// owns the plan; the ui loops call tick on every frame, and the loop the
// plan names calls stall.Watch there, since Watch watches its caller.
type stallSwitch struct {
	on atomic.Bool // a Watch is in force: from just before Watch until its stop has returned

	// want is the ui loop to watch now, nil for none: read by every frame
	// of both loops without the lock, so the loop not watched never waits
	// for the one that is starting to be.
	want atomic.Pointer[string]
	mu   sync.Mutex // protects stop, and the writes of want
	stop func()     // the stop of the Watch in force; nil if none

	rmu     sync.Mutex    // protects reports, begin, watchAt, stops, stopsAt and watchesAt
	reports []stallReport // the window's, in the order they came
	begin   time.Time     // the window's start
	watchAt float64       // when the Watch in force began, ms from begin
	stops   []float64     // how long each of the window's stops took, ms
	stopsAt []float64     // when each began, ms from begin
	// watchesAt holds, for each stop, when the Watch it ended began.
	watchesAt []float64

	watch func(stall.Options) (func(), error) // stall.Watch; a test's fake
}

func newStallSwitch() *stallSwitch { return &stallSwitch{watch: stall.Watch} }

// run follows plan through a window of d, each quarter in turn, and
// leaves stall off when ctx ends.
func (s *stallSwitch) run(ctx context.Context, d time.Duration, plan [4]string) {
	start := time.Now()
	s.rmu.Lock()
	s.begin = start
	s.rmu.Unlock()
	t := time.NewTimer(d / 4)
	defer t.Stop()
	for i, key := range plan {
		s.set(key)
		t.Reset(time.Until(start.Add(d * time.Duration(i+1) / 4)))
		select {
		case <-ctx.Done():
			s.set("")
			return
		case <-t.C:
		}
	}
	s.set("")
}

// set stops the Watch in force, if any, and then asks for key to be
// watched from its next frame on ("" for none): a second Watch while the
// first one's stop runs would find the flight recorder taken.
func (s *stallSwitch) set(key string) {
	s.mu.Lock()
	stop := s.stop
	s.want.Store(nil)
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		t0 := time.Now()
		stop() // returns once the waits before it are reported
		s.on.Store(false)
		s.rmu.Lock()
		s.stops = append(s.stops, ms(time.Since(t0)))
		s.stopsAt = append(s.stopsAt, ms(t0.Sub(s.begin)))
		s.watchesAt = append(s.watchesAt, s.watchAt)
		s.rmu.Unlock()
	}
	if key != "" {
		s.mu.Lock()
		s.want.Store(&key)
		s.mu.Unlock()
	}
}

// wants reports whether the plan wants key watched now.
func (s *stallSwitch) wants(key string) bool {
	w := s.want.Load()
	return w != nil && *w == key
}

// tick is called by the ui loop key at the start of each frame: if the
// plan wants it watched and it is not yet, it starts watching the calling
// goroutine. It reports whether stall is on.
func (s *stallSwitch) tick(key string) (on bool, err error) {
	if !s.wants(key) {
		return s.on.Load(), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wants(key) || s.stop != nil {
		return s.on.Load(), nil
	}
	s.on.Store(true)
	s.rmu.Lock()
	s.watchAt = ms(time.Since(s.begin))
	s.rmu.Unlock()
	stop, err := s.watch(stall.Options{Budget: stallBudget, OnReport: s.keeper(key)})
	if err != nil {
		s.on.Store(false)
		return false, err
	}
	s.stop = stop
	return true, nil
}

// keeper keeps key's reports, noting those that name its file.
func (s *stallSwitch) keeper(key string) func(stall.Report) {
	return func(r stall.Report) {
		kept := stallReport{Loop: key, DurationMs: ms(r.Duration), Wait: r.Wait, Syscall: r.Syscall,
			Path: r.Path, NamesFile: namesFile(r.Path, uiFiles[key]), Ongoing: r.Ongoing, Dropped: r.Dropped}
		if len(r.Stack) > 0 {
			f := r.Stack[0]
			kept.Site = fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
		}
		s.rmu.Lock()
		defer s.rmu.Unlock()
		s.reports = append(s.reports, kept)
	}
}

// take returns the window's reports, and their counts as series for the
// table: key+stallOn+".reports" and key+stallOn+".reports_file" for each
// ui loop, and how long each stop took as stallStops. The next window
// starts with none.
func (s *stallSwitch) take() (map[string][]float64, []stallReport) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	out := map[string][]float64{}
	for key := range uiFiles {
		n, file := 0.0, 0.0
		for _, r := range s.reports {
			if r.Loop == key {
				n++
				file += b2f(r.NamesFile)
			}
		}
		out[key+stallOn+".reports"], out[key+stallOn+".reports_file"] = []float64{n}, []float64{file}
	}
	out[stallStops], out[stallStopsAt], out[stallWatchAt] = s.stops, s.stopsAt, s.watchesAt
	reps := s.reports
	s.reports, s.stops, s.stopsAt, s.watchesAt = nil, nil, nil, nil
	return out, reps
}

// checkSamples fails the window of d in which a probe took no sample: the
// machine was too slow or too loaded for -duration. The exception is a ui
// loop's frames with stall off when stops of stall covered every quarter
// of plan without a Watch: the frames until a stop returns count as stall
// on, and on a slow machine (a stop took up to 11 s under QEMU's TCG) the
// stop after the first quarter of an on-off-off-on window can outlast the
// off half. Those figures then pool the other windows' frames.
func checkSamples(series map[string][]float64, d time.Duration, plan [4]string) error {
	covered := offCovered(series[stallWatchAt], series[stallStopsAt], series[stallStops], d, plan)
	for _, k := range slices.Sorted(maps.Keys(series)) {
		switch {
		case len(series[k]) > 0, k == "save-statefile.durable", k == stallStops, k == stallStopsAt, k == stallWatchAt:
		case covered && (k == uiSync || k == uiSync+".late" || k == uiStatefile || k == uiStatefile+".late"):
		default:
			return fmt.Errorf("probe series %s has no samples in %v: the machine is too slow or too loaded for this -duration%s", k, d,
				stopsNote(series[stallWatchAt], series[stallStopsAt], series[stallStops]))
		}
	}
	return nil
}

// stopsNote says, for the error of a window without samples, when each of
// stall's Watches began and when its stop began and ended; "" if there
// were none.
func stopsNote(watchAt, at, took []float64) string {
	var b strings.Builder
	for i := range min(len(watchAt), len(at), len(took)) {
		fmt.Fprintf(&b, "; stall watched from %.0f ms, its stop ran from %.0f to %.0f ms", watchAt[i], at[i], at[i]+took[i])
	}
	return b.String()
}

// offCovered reports whether every quarter of plan without a Watch lies
// inside one Watch and its stop: the Watch began by the quarter's start
// (up to a frame after it, for no frame can start in between) and its stop
// ended after the quarter's end. Stall is on from a Watch until its stop
// returns, and the stop begins only when the run goroutine gets to it,
// which under QEMU's TCG was up to tens of ms after the boundary, so such
// a quarter has no frame with stall off. A quarter a Watch began inside,
// because the watched loop's frame ran across the boundary, had time with
// stall off, and is not covered; nor is an off quarter with no Watch
// before it (the first of off-on-on-off).
func offCovered(watchAt, at, took []float64, d time.Duration, plan [4]string) bool {
	q := ms(d / 4)
	for i, key := range plan {
		if key != "" {
			continue
		}
		lo, hi := float64(i)*q, float64(i+1)*q
		inside := false
		for j := range min(len(watchAt), len(at), len(took)) {
			inside = inside || watchAt[j] <= lo+ms(frameRate) && at[j]+took[j] >= hi
		}
		if !inside {
			return false
		}
	}
	return true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// namesFile reports whether path, a report's Path, is the file name or a
// temporary file written to replace it: renameio and statefile both name
// theirs "." + name + digits (renameio/v2 tempfile.go, openTempFile; the
// statefile package documentation), in the file's directory or, for
// renameio, in os.TempDir when a rename from there works.
func namesFile(path, name string) bool {
	if path == "" {
		return false
	}
	b := filepath.Base(path)
	if b == name {
		return true
	}
	rest, ok := strings.CutPrefix(b, "."+name)
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}
