// Command offmain-fyne is a one-window Fyne app whose text box keeps what is
// typed in it with offmain's drafts store, wired to the quit as the flush
// package's documentation says for Fyne ("Toolkits"): flush.Notify beside
// Fyne's own SIGINT and SIGTERM handler, a flush from the window's close
// intercept while the window is still on screen, and the hook run once more
// after ShowAndRun returns. Its end-to-end test (e2e_linux_test.go) drives
// it under Xvfb: each signal a session sends, twice, and the close button.
// With OFFMAIN_STALL=1 offmain's stall package reports each wait of the UI
// goroutine longer than a frame to standard error (README.md).
//
//	go run ./examples/fyne -dir /tmp/fyne-state
//
// Fyne needs cgo and, on Debian, gcc, libgl1-mesa-dev and the X11
// development headers (libx11-dev libxcursor-dev libxrandr-dev
// libxinerama-dev libxi-dev libxxf86vm-dev): see developer.fyne.io.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/stall"
	"github.com/offmain/offmain/statefile"
)

// holdEnv names a file the quit flush waits for, up to its deadline, as
// one more item of the hook ("hold"): how the end-to-end test keeps a flush
// under way while it sends a second signal or types into the window, as a
// slow disk would. The app prints "hold: flush N" to standard error each
// time the item starts.
const holdEnv = "OFFMAIN_FYNE_HOLD"

// traceEnv, set to 1, makes the app print each change of the text box to
// standard error as it reaches the drafts store ("text: %q"): how the
// end-to-end test knows its keys arrived without waiting for the disk.
const traceEnv = "OFFMAIN_FYNE_TRACE"

// tab is the draft the text box keeps.
const tab = "note"

func main() {
	os.Exit(run())
}

// run runs the app and returns its exit status when the window closes; a
// signal's quit ends the process in flush.Notify instead, with 128+signal.
func run() int {
	dir := flag.String("dir", "", "the state directory (default: offmain-fyne in the user's config directory)")
	deadline := flag.Duration("flush-deadline", 2*time.Second, "how long the quit flush waits for the disk")
	settle := flag.Duration("settle", 0, "how long typing pauses before a draft is saved, and the longest it waits (0: drafts' defaults, 300ms and 2s)")
	flag.Parse()
	if *dir == "" {
		cfg, err := os.UserConfigDir()
		if err != nil {
			log.Print(err)
			return 1
		}
		*dir = filepath.Join(cfg, "offmain-fyne")
	}

	// The hook first, each store added right after it is made, then
	// Notify: a signal from here on flushes what was added.
	hook := flush.New(flush.Options{Timeout: *deadline})
	st := statefile.NewStore(statefile.Options{})
	hook.Add("state", st)
	d, err := drafts.Open(st, filepath.Join(*dir, "drafts.json"), drafts.Options{Settle: *settle, MaxWait: *settle})
	if err != nil {
		log.Print(err)
		return 1
	}
	hook.Add("drafts", d)
	if path := os.Getenv(holdEnv); path != "" {
		hook.Add("hold", holdUntil(path))
	}
	stop := hook.Notify()
	defer stop() // waits for a signal's quit, so run does not return first

	a := app.NewWithID("io.github.offmain.fyne")
	w := a.NewWindow("offmain fyne")
	text := widget.NewMultiLineEntry()
	text.SetPlaceHolder("Type here; it is kept across quits.")
	if saved, ok := d.Get(tab); ok {
		text.SetText(saved.Text)
	}
	trace := os.Getenv(traceEnv) == "1"
	if trace {
		traceSignals()
	}
	text.OnChanged = func(s string) {
		d.Set(tab, s) // an enqueue: never waits on the disk
		if trace {
			fmt.Fprintf(os.Stderr, "text: %q\n", s)
		}
	}
	w.SetContent(text)
	w.Resize(fyne.NewSize(480, 320))
	w.Canvas().Focus(text)

	// The close button: Fyne calls the intercept on its main goroutine
	// instead of closing, so the flush runs on a goroutine of its own while
	// the window keeps drawing and taking keys, and the answer comes back
	// through fyne.Do.
	w.SetCloseIntercept(func() {
		go func() {
			r := hook.Run()
			fyne.Do(func() {
				if r.Saved {
					w.Close() // the last window: ShowAndRun returns
					return
				}
				dialog.ShowConfirm("Not saved", r.String()+"\nQuit anyway?", func(quit bool) {
					if quit {
						w.Close()
					}
				}, w)
			})
		}()
	})
	// With OFFMAIN_STALL=1, stall reports each wait of this goroutine longer
	// than a frame to the log (stderr): it is Fyne's main goroutine, locked
	// to the main thread, where ShowAndRun runs the driver's loop and every
	// callback. EnvOnly: without the variable nothing runs.
	stopStall, err := stall.Watch(stall.Options{EnvOnly: true})
	if err != nil {
		log.Print(err) // the app runs without it
	}
	w.ShowAndRun()
	stopStall() // before the Exit below, whose wait for the disk is not the UI's
	// The window is gone: the app exits, and the report can only reach a
	// log. This Exit saves what was typed during the close's flush and runs
	// the stoppers; on a signal's quit it joins the Exit Notify runs, and
	// Notify exits the process.
	log.Print(hook.Exit())
	return 0
}

// holdUntil returns the hook item holdEnv adds: it waits until path exists
// or its context ends.
func holdUntil(path string) flush.Func {
	var n atomic.Int32
	return func(ctx context.Context) error {
		fmt.Fprintf(os.Stderr, "hold: flush %d\n", n.Add(1))
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("hold: %s does not exist: %w", path, ctx.Err())
			case <-tick.C:
			}
		}
	}
}

// traceSignals prints each SIGTERM and SIGHUP the app gets (with
// traceEnv), so that a test knows one arrived while the quit's flush
// runs: Notify notes it only with its report. A signal ignored at start
// stays so.
func traceSignals() {
	var sigs []os.Signal
	for _, s := range []os.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	c := make(chan os.Signal, 2)
	signal.Notify(c, sigs...)
	go func() { // ends with the process
		for s := range c {
			fmt.Fprintf(os.Stderr, "signal: %v\n", s)
		}
	}()
}
