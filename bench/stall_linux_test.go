package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/offmain/offmain/stall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestStallCountsReports runs the two ui loops through one window's plan,
// as app.run does, the sync loop's save waiting 50 ms in read(2) on a FIFO
// named as its file, the other's doing nothing, and checks that stall's
// reports reach the table's row: those of the sync loop name its file,
// and the other loop has none that do.
func TestStallCountsReports(t *testing.T) {
	r, w := fifo(t, filepath.Join(t.TempDir(), uiFiles[uiSync]))
	var writers sync.WaitGroup
	defer writers.Wait()
	slowSave := func(int) error {
		writers.Go(func() { writeAfter(w, 50*time.Millisecond) })
		_, err := io.ReadFull(r, make([]byte, 1))
		return err
	}
	const d = 2 * time.Second // a quarter holds a save or two of each loop
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	sw := newStallSwitch()
	series := map[string][]float64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for key, save := range map[string]func(int) error{uiSync: slowSave, uiStatefile: func(int) error { return nil }} {
		wg.Go(func() {
			s, err := uiProbe(ctx, key, save, sw)
			assert.NoError(t, err, "%s probe", key)
			mu.Lock()
			defer mu.Unlock()
			for k, v := range s {
				series[k] = v
			}
		})
	}
	wg.Go(func() { sw.run(ctx, d, stallPlan(0)) })
	wg.Wait()
	counts, reports := sw.take()
	for k, v := range counts {
		series[k] = v
	}
	for _, r := range reports {
		t.Logf("report: %+v", r)
	}

	for _, key := range []string{uiSync, uiStatefile} {
		assert.NotEmpty(t, series[key], "%s: frames with stall off", key)
		assert.NotEmpty(t, series[key+stallOn], "%s: frames with stall on", key)
	}
	res := newResults([]arm{{name: "default", kind: armDefault}}, 1)
	res.add("default", 0, series)
	got := rowsByKey(res.rows(1))
	sync, other := got["default ui+stall/reports_naming_file_sync"], got["default ui+stall/reports_naming_file_statefile"]
	assert.GreaterOrEqual(t, sync.K, 1, "sync loop: got %d/%d reports naming %q, want at least one", sync.K, sync.N, uiFiles[uiSync])
	assert.Zero(t, other.K, "statefile loop: got %d/%d reports naming its file, want none", other.K, other.N)
}

// fifo makes a FIFO at path and returns its ends. The read end is a
// blocking descriptor, which os reads with read(2) on the calling thread
// (fifo(7)): opened without O_NONBLOCK it would wait for a writer, so it is
// made blocking once the write end is open.
func fifo(t *testing.T, path string) (r, w *os.File) {
	t.Helper()
	require.NoError(t, unix.Mkfifo(path, 0o600))
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	w, err = os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fd, false))
	r = os.NewFile(uintptr(fd), path)
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// writeAfter writes one byte to w once d has passed: the length of the
// wait it ends.
func writeAfter(w *os.File, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
	w.Write([]byte{1})
}

func TestNamesFile(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/c/app/ui sync.json", true},
		{"/tmp/.ui sync.json8364519", true}, // renameio's temp file, in os.TempDir
		{"/c/app/.ui sync.json12", true},
		{"/c/app/.ui sync.json", false},
		{"/c/app/.ui sync.jsonx1", false},
		{"/c/app/ui statefile.json", false},
		{"pipe:[1234]", false},
		{"", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, namesFile(tt.path, "ui sync.json"), "namesFile(%q)", tt.path)
	}
}

// TestSlowStallStop: a stop of stall that outlasts the off half of an
// on-off-off-on window, as a last pass over the trace did under QEMU's
// TCG, counts its time as stall on and is recorded with when it began, and
// the window it emptied of frames with stall off still counts. A window
// whose off quarters no stop covered fails on any empty series.
func TestSlowStallStop(t *testing.T) {
	const d = 8 * time.Second
	const slow = 5432 * time.Millisecond // from the first quarter's end into the last
	synctest.Test(t, func(t *testing.T) {
		sw := newStallSwitch()
		sw.watch = func(stall.Options) (func(), error) {
			return func() { time.Sleep(slow) }, nil
		}
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		go sw.run(ctx, d, stallPlan(1)) // on-off-off-on
		synctest.Wait()
		var off, on int // ui-statefile's frames, as uiProbe counts them
		for ctx.Err() == nil {
			_, err := sw.tick(uiSync)
			require.NoError(t, err)
			watched, err := sw.tick(uiStatefile)
			require.NoError(t, err)
			if watched || sw.on.Load() {
				on++
			} else {
				off++
			}
			time.Sleep(frameRate)
		}
		time.Sleep(slow) // the last stop
		synctest.Wait()
		series, _ := sw.take()
		assert.Zero(t, off, "frames with stall off: the stop after the first quarter ran through the off half")
		assert.NotZero(t, on)
		assert.Equal(t, []float64{ms(slow), ms(slow)}, series[stallStops], "the stop after the first quarter, and the one at the end")
		assert.Equal(t, []float64{ms(d / 4), ms(d)}, series[stallStopsAt])
		require.Len(t, series[stallWatchAt], 2)
		assert.Zero(t, series[stallWatchAt][0], "the first Watch began at the first frame")
		assert.InDelta(t, ms(d/4+slow), series[stallWatchAt][1], ms(frameRate),
			"the second began at the first frame after the first stop, which ran into its quarter")

		series[uiStatefile], series[uiStatefile+".late"] = nil, nil
		series[uiSync], series[uiSync+".late"] = nil, nil
		series["burst"] = []float64{1}
		assert.NoError(t, checkSamples(series, d, stallPlan(1)), "the ui loops' off half, emptied by the stop")
		assert.ErrorContains(t, checkSamples(series, d, stallPlan(0)), "has no samples",
			"off-on-on-off: the first quarter, before any Watch, has frames with stall off unless the loop stalled")
		series[stallStopsAt] = []float64{ms(d/4) + 40, ms(d)}
		assert.NoError(t, checkSamples(series, d, stallPlan(1)), "a stop that began 40 ms late, its timer late, the Watch in force until then")
		series[stallWatchAt] = []float64{ms(d/4) + 30, ms(3 * d / 4)}
		err := checkSamples(series, d, stallPlan(1))
		assert.ErrorContains(t, err, "has no samples",
			"a Watch that began inside the off quarter (its loop's frame ran across the boundary): stall was off before it")
		assert.ErrorContains(t, err, "stall watched from 2030 ms, its stop ran from 2040 to 7472 ms", "the error says when")
		series[stallWatchAt] = []float64{0, ms(d/4 + slow)}
		series[stallStopsAt] = []float64{ms(d / 4), ms(d)}
		series[stallStops] = []float64{ms(d/2) - 1, ms(slow)}
		assert.ErrorContains(t, checkSamples(series, d, stallPlan(1)), "has no samples",
			"a stop that ended before the off half did: its last frames were stall off")
		series[stallStops], series["burst"] = []float64{ms(slow), ms(slow)}, nil
		assert.ErrorContains(t, checkSamples(series, d, stallPlan(1)), "probe series burst has no samples", "a probe other than a ui loop's off half")
	})
}
