// Package quit is how the example apps end. A signal (SIGINT, SIGTERM,
// SIGHUP) asks the UI to quit as its own quit key does, so that the app's
// one quit path, and its flush, runs; the same interactive signal again
// while quitting (Ctrl-C, Ctrl-C) exits at once with 128+signal, while any
// other (a logout's SIGHUP after its SIGTERM) lets the quit go on; a
// signal ignored when the app started (SIGHUP under nohup) stays ignored;
// a UI that does not end in time is flushed from the watcher's goroutine.
// [Watcher.End] then prints the flush report and returns the exit status.
// These are flush.Hook.Notify's rules; the examples keep their own watcher
// because a signal here asks the UI to quit rather than running the hook
// from the signal's goroutine.
package quit

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/offmain/offmain/flush"
)

// Options configure [Watch].
type Options struct {
	// Name prefixes the lines printed to stderr ("composer"). Zero: none.
	Name string
	// Quit asks the UI to quit, as its quit key does. It is called on the
	// watcher's goroutine at the first signal and must not block. Required.
	Quit func(sig os.Signal)
	// Stuck bounds how long the UI may take to end after Quit: past it,
	// Flush runs on the watcher's goroutine, its report is printed and the
	// process exits with 128+signal, so that a UI blocked (in a synchronous
	// save on a disk that does not answer, say) does not keep the state from
	// the disk. Zero: no bound.
	Stuck time.Duration
	// Flush is the quit path run when the UI is stuck. Required with Stuck.
	Flush func() flush.Report
}

// Watcher watches for the signals that quit the app. Its goroutine ends
// when [Watcher.End] is called.
type Watcher struct {
	opts  Options
	ch    chan os.Signal
	ui    chan struct{} // closed by UIEnded
	done  chan struct{} // closed by Stop
	ended chan struct{} // closed when the goroutine has ended
	first os.Signal     // written by the goroutine, read after ended
}

// Watch starts watching. It panics if opts.Quit is nil, or opts.Flush is
// nil while opts.Stuck is set.
func Watch(opts Options) *Watcher {
	if opts.Quit == nil || (opts.Stuck > 0 && opts.Flush == nil) {
		panic("quit: Watch without Options.Quit, or with Stuck but no Flush")
	}
	w := &Watcher{opts: opts, ch: make(chan os.Signal, 2), ui: make(chan struct{}),
		done: make(chan struct{}), ended: make(chan struct{})}
	var caught []os.Signal
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		// signal.Notify would turn an ignored signal back on: nohup's
		// SIGHUP would quit the app when its terminal closes.
		if !signal.Ignored(sig) {
			caught = append(caught, sig)
		}
	}
	if len(caught) > 0 { // with none, signal.Notify would catch every signal
		signal.Notify(w.ch, caught...)
	}
	go w.watch()
	return w
}

func (w *Watcher) watch() {
	defer close(w.ended)
	stuck := time.NewTimer(time.Hour)
	stuck.Stop()
	defer stuck.Stop()
	ui := w.ui
	for {
		select {
		case s := <-w.ch:
			if w.first == nil {
				w.first = s
				w.opts.Quit(s)
				if w.opts.Stuck > 0 && ui != nil {
					stuck.Reset(w.opts.Stuck)
				}
				continue
			}
			if s != w.first || s != os.Interrupt {
				// A logout sends SIGTERM and then SIGHUP (systemd-logind,
				// SendSIGHUP=yes); a service manager may repeat SIGTERM.
				w.printf("%v while quitting on %v: still quitting\n", s, w.first)
				continue
			}
			w.printf("%v again while quitting: exiting now\n", s)
			os.Exit(exitCode(s))
		case <-ui:
			stuck.Stop()
			ui = nil
		case <-stuck.C:
			w.printf("the UI did not end within %v: flushing from here\n", w.opts.Stuck)
			fmt.Fprintln(os.Stderr, w.opts.Flush())
			os.Exit(exitCode(w.first))
		case <-w.done:
			return
		}
	}
}

func (w *Watcher) printf(format string, args ...any) {
	if w.opts.Name != "" {
		format = w.opts.Name + ": " + format
	}
	fmt.Fprintf(os.Stderr, format, args...)
}

// UIEnded tells the watcher that the UI has ended and the app's quit path
// runs: [Options.Stuck] no longer applies. Call it at most once, before
// [Watcher.End].
func (w *Watcher) UIEnded() { close(w.ui) }

// stop stops watching and returns the signal that quit the app, or nil.
func (w *Watcher) stop() os.Signal {
	signal.Stop(w.ch)
	close(w.done)
	<-w.ended
	return w.first
}

// End stops watching, prints rep and where the state is (dir), and returns
// the exit status: 128+n when signal n quit the app, 1 when err (the UI's)
// is not nil, 0 otherwise. Call it once, after the quit path that made rep:
// a second signal during that path still exits at once.
func (w *Watcher) End(rep flush.Report, dir string, err error) int {
	sig := w.stop()
	fmt.Fprintln(os.Stderr, rep)
	w.printf("state in %s\n", dir)
	switch {
	case sig != nil:
		return exitCode(sig)
	case err != nil:
		w.printf("%v\n", err)
		return 1
	}
	return 0
}

// exitCode is the status a process that quits on sig exits with: 128 plus
// the signal number, as shells report a death by signal (bash(1), "EXIT
// STATUS"), or 1 for a signal without a number.
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
