package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

// Sizes of the app's own files.
const (
	probeBlock    = 4 << 10 // read and fsync probes move 4 KiB, a page
	readProbeSize = 8 << 20 // the read probe picks a random block of this file
	fsyncSlots    = 256     // the fsync probe cycles over this many blocks
	flushTimeout  = 2 * time.Minute
)

// app is the stand-in for the GUI: its files and its probes, all run in the
// bench process at default priority.
type app struct {
	read   *uncached
	rbuf   []byte // page-aligned, for O_DIRECT
	fsyncF *os.File
	wbuf   []byte
	saver  *saver
	stall  *stallSwitch
	only   []string // the probes that run (-probes); nil: all
}

// newApp makes the app's files under dir.
func newApp(dir string) (*app, error) {
	a := &app{wbuf: make([]byte, probeBlock), stall: newStallSwitch()}
	var err error
	readPath := filepath.Join(dir, "read probe.bin")
	if err = writeRandomFile(readPath, readProbeSize); err != nil {
		return a, err
	}
	if a.read, err = openUncached(readPath); err != nil {
		return a, err
	}
	if a.rbuf, err = alignedBuf(probeBlock); err != nil {
		return a, err
	}
	if a.fsyncF, err = os.OpenFile(filepath.Join(dir, "fsync probe.bin"), os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		return a, err
	}
	a.saver, err = newSaver(dir)
	return a, err
}

func (a *app) readOnce(int) error {
	off := rand.Int64N(a.read.size/probeBlock) * probeBlock
	if err := a.read.readAt(a.rbuf, off); err != nil {
		return fmt.Errorf("read %s at %d: %w", a.read.f.Name(), off, err)
	}
	return nil
}

func (a *app) fsyncOnce(seq int) error {
	off := int64(seq%fsyncSlots) * probeBlock
	if _, err := a.fsyncF.WriteAt(a.wbuf, off); err != nil {
		return err
	}
	return a.fsyncF.Sync()
}

// probeFunc runs one probe until ctx ends and returns its series.
type probeFunc func(ctx context.Context) (map[string][]float64, error)

func (a *app) probes() map[string]probeFunc {
	s := a.saver
	return map[string]probeFunc{
		"frame": frameProbe,
		"burst": burstProbe,
		"read": func(ctx context.Context) (map[string][]float64, error) {
			return everyProbe(ctx, "read", ioEvery, a.readOnce)
		},
		"fsync": func(ctx context.Context) (map[string][]float64, error) {
			return everyProbe(ctx, "fsync", ioEvery, a.fsyncOnce)
		},
		"save-sync": func(ctx context.Context) (map[string][]float64, error) {
			return everyProbe(ctx, "save-sync", saveEvery, s.saveSync("save sync.json"))
		},
		"save-statefile": func(ctx context.Context) (map[string][]float64, error) {
			return everyProbe(ctx, "save-statefile", saveEvery, saveStatefile(s.probe))
		},
		uiSync: func(ctx context.Context) (map[string][]float64, error) {
			return uiProbe(ctx, uiSync, s.saveSync(uiFiles[uiSync]), a.stall)
		},
		uiStatefile: func(ctx context.Context) (map[string][]float64, error) {
			return uiProbe(ctx, uiStatefile, saveStatefile(s.ui), a.stall)
		},
	}
}

// run runs every probe (or those a.only names) at once for d, with stall on and off as plan says,
// calls atEnd as soon as they have stopped, then flushes statefile and adds
// its time-until-durable series and stall's report counts; it returns
// stall's reports too. The first probe error (an I/O error, a panic) stops
// them all and is returned.
func (a *app) run(ctx context.Context, d time.Duration, plan [4]string, atEnd func()) (map[string][]float64, []stallReport, error) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // protects out and errs
		out  = map[string][]float64{}
		errs []error
	)
	for name, p := range a.probes() {
		if a.only != nil && !slices.Contains(a.only, name) {
			continue
		}
		wg.Go(func() {
			series, err := runProbe(wctx, name, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				cancel()
			}
			for k, v := range series {
				out[k] = v
			}
		})
	}
	wg.Go(func() { a.stall.run(wctx, d, plan) })
	wg.Wait()
	atEnd()
	counts, reports := a.stall.take()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	fctx, fcancel := context.WithTimeout(ctx, flushTimeout)
	defer fcancel()
	errs = append(errs, a.saver.flush(fctx))
	maps.Copy(out, a.saver.takeDurable())
	maps.Copy(out, counts)
	maps.DeleteFunc(out, func(k string, _ []float64) bool { return !a.runs(k) })
	return out, reports, errors.Join(errs...)
}

// runs reports whether the series k is of a probe that runs: its name up
// to the first dot, without stallOn, is not that of a probe -probes left
// out, and stall's own series go with the ui loops, which it watches.
func (a *app) runs(k string) bool {
	if a.only == nil {
		return true
	}
	probe, _, _ := strings.Cut(k, ".")
	probe = strings.TrimSuffix(probe, stallOn)
	if probe == stallSeries {
		return uiRuns(a.only)
	}
	return slices.Contains(a.only, probe) || !slices.Contains(probeNames, probe)
}

// runProbe runs p on a thread of its own and turns a panic into an error,
// so the bench still kills its workers and removes its scratch folder. It
// adds, as name.runq, the time that thread waited on a run queue during
// the probe (schedstat), which tells CPU waiting apart from I/O waiting;
// without CONFIG_SCHED_INFO there is no such series.
func runProbe(ctx context.Context, name string, p probeFunc) (series map[string][]float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s probe panicked: %v\n%s", name, r, debug.Stack())
		}
	}()
	runtime.LockOSThread() // the probes that lock themselves nest inside this
	defer runtime.UnlockOSThread()
	d0, errRunq := threadRunDelay()
	series, err = p(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s probe: %w", name, err)
	}
	if d1, err := threadRunDelay(); err == nil && errRunq == nil {
		series[name+".runq"] = []float64{ms(d1 - d0)}
	}
	return series, nil
}

// close closes what newApp opened, also after newApp failed half-way.
func (a *app) close(ctx context.Context) error {
	var errs []error
	if a.saver != nil {
		errs = append(errs, a.saver.close(ctx))
	}
	if a.read != nil {
		errs = append(errs, a.read.f.Close())
	}
	if a.fsyncF != nil {
		errs = append(errs, a.fsyncF.Close())
	}
	return errors.Join(errs...)
}

// writeRandomFile writes size random bytes to path and fsyncs it.
func writeRandomFile(path string, size int) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(rand.Uint32())
	}
	for n := 0; n < size && err == nil; n += len(buf) {
		_, err = f.Write(buf[:min(len(buf), size-n)])
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
