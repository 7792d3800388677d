package stall_test

import (
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/stall"
)

// watch watches the calling goroutine with opts, its OnReport replaced by
// one that collects the reports. The function it returns stops watching
// and returns them, all delivered by then.
func watch(t *testing.T, opts stall.Options) (stop func() []stall.Report) {
	t.Helper()
	var (
		mu  sync.Mutex
		got []stall.Report
	)
	opts.OnReport = func(r stall.Report) {
		t.Logf("report: %v", r)
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}
	stopWatch, err := stall.Watch(opts)
	require.NoError(t, err)
	t.Cleanup(stopWatch)
	return func() []stall.Report {
		stopWatch()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// readAfter reads one byte from r, on the calling goroutine, while a
// goroutine it adds to wg writes that byte to w after d.
func readAfter(t *testing.T, wg *sync.WaitGroup, r, w *os.File, d time.Duration) {
	wg.Go(func() { writeAfter(w, d) })
	_, err := io.ReadFull(r, make([]byte, 1))
	require.NoError(t, err)
}

// writeAfter writes one byte to w once d has passed.
func writeAfter(w *os.File, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
	w.Write([]byte{1})
}

// funcName returns the name of the function f as a stack spells it.
func funcName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

// inStack reports whether a frame of r's stack is in the function named
// fn or in a function literal of it.
func inStack(r stall.Report, fn string) bool {
	return slices.ContainsFunc(r.Stack, func(f runtime.Frame) bool {
		return f.Function == fn || strings.HasPrefix(f.Function, fn+".func")
	})
}
