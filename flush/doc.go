// Package flush is the quit-time hook: one shared deadline over everything
// that must reach the disk before the process exits.
//
// Register each store with [Hook.Add], then call [Hook.Run] from the
// toolkit's quit path, or let [Hook.Notify] call it on SIGINT, SIGTERM or
// SIGHUP. Run flushes every store in parallel and returns by the deadline even
// when a disk write never finishes, with a [Report] that says what drained and
// names what did not. statefile.Store, drafts.Store and anchors.Store all
// satisfy [Flusher].
//
// Add every store the app saves through: the statefile.Store, and each
// drafts.Store and anchors.Store on it. Adding the statefile.Store does not
// cover the drafts and anchors stores: they keep the last edits in memory
// until the edits settle (300 ms), and only their own Flush hands those to
// statefile. Added together, each file's failure is reported once, under
// the item that owns the file: drafts.json under "drafts", not also under
// the statefile.Store's item ([PathOwner], [ExceptFlusher]).
//
// The order at start-up: make the Hook first and Add each store right after
// making it (statefile.NewStore, drafts.Open), before its first Save, and
// the app's agents as flush.Func(group.Stop) (qos.Group) before the first
// one starts; call Notify once the Hook exists. A signal runs only what was
// added by then, and Notify exits the process when Run returns, so nothing
// after it runs: whatever must happen at quit belongs in the Hook. Run
// closes nothing (see [Hook.Run]).
//
//	hook := flush.New(2 * time.Second)
//	st := statefile.NewStore(statefile.Options{})
//	hook.Add("state", st)
//	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
//	if err != nil { ... }
//	hook.Add("drafts", d)
//	places, err := anchors.Open(st, filepath.Join(dir, "anchors.json"), anchors.Options{})
//	if err != nil { ... }
//	hook.Add("anchors", places)
//	var agents qos.Group
//	hook.Add("agents", flush.Func(agents.Stop))
//	stop := hook.Notify()
//	defer stop()
//
// The snippets below start from such a hook.
//
// Why a deadline: Chromium's ImportantFileWriter blocks shutdown on a pending
// write with no limit, Firefox's AsyncShutdown crashes the browser after 60 s
// (toolkit/components/asyncshutdown), and Android's QueuedWork.waitToFinish
// stalls an activity's stop into an ANR. A desktop app should instead give the
// disk a short, fixed time, then exit and say what was lost.
//
// # Toolkits
//
// None of these makes a toolkit a dependency of this module; they are the
// lines to put in an app.
//
// Fyne (read against Fyne v2.7.1, and driven under Xvfb by the
// repository's examples/fyne, whose end-to-end test runs in its CI). Fyne
// catches SIGINT and SIGTERM itself: its GLFW
// driver's Run starts catchTerm (internal/driver/glfw/driver.go,
// driver_desktop.go), which calls signal.Notify for those two and, at the
// first, queues the driver's Quit on the main goroutine (it reads no
// second signal: a second Ctrl-C reaches only Notify). The GL loop then
// terminates GLFW, destroying every window (runGL in
// internal/driver/glfw/loop.go), and ShowAndRun returns. A signal's quit
// goes straight to the driver's Quit: it never reaches a window's close
// intercept. Fyne does not catch SIGHUP, whose default action kills the
// process, and a logout sends SIGTERM and at once SIGHUP: without Notify,
// the SIGHUP kills the app in the middle of the flush that the SIGTERM
// started. So call Notify beside Fyne, and run the hook once more on the
// line after ShowAndRun, for the quits that are not signals (the last
// window closed, a menu's Quit). On a signal that Run joins Notify's: one
// flush, one report (see [Hook.Run]). Keep the deferred stop in the
// function that calls ShowAndRun: stop waits for a signal's quit, so main
// does not return (exit status 0, and perhaps no report) before Notify has
// printed the report and exited with 128+signal.
//
// Not in Lifecycle().SetOnStopped: Fyne v2.7.1 loses that callback at some
// quits. The lifecycle's goroutine hands it to the driver's main-goroutine
// queue (Lifecycle.RunEventQueue calls DoFromGoroutine, runOnMainWithWait
// in loop.go), and runGL, quitting, empties that queue without running
// what is in it; the callback runs only when the goroutine comes late
// enough to find the queue marked drained. In a window that closed itself
// under Xvfb, OnStopped did not run at 16 of 105 quits (2 of 20 idle, 12
// of 60 beside a busy loop on each core, 2 of 25 on a loaded machine);
// The same drain can also leave the callback queued with nobody to run
// it: the lifecycle's goroutine then waits in runOnMainWithWait for ever,
// and so do Lifecycle.WaitForEvents and ShowAndRun (seen once in 15
// close-button quits beside busy loops; the goroutine dump showed both).
// Fyne queues a stopped callback of its own (the preferences' save) in
// every app, so no wiring avoids it: a signal's quit still exits through
// Notify, and a close-button quit has flushed once already (below), but
// the process then stays, windowless, until it is killed.
//
//	a := app.New()
//	w := a.NewWindow("Agent")
//	// ... the hook, every store added, stop := hook.Notify(), defer stop() (above) ...
//	w.SetCloseIntercept(func() { // the close button, on Fyne's main goroutine: do not wait here
//		go func() {
//			r := hook.Run()
//			fyne.Do(func() {
//				if r.Drained {
//					w.Close() // the last window: ShowAndRun returns
//					return
//				}
//				dialog.ShowConfirm("Not saved", r.String()+"\nQuit anyway?", func(quit bool) {
//					if quit {
//						w.Close()
//					}
//				}, w)
//			})
//		}()
//	})
//	w.ShowAndRun()
//	log.Print(hook.Run()) // the windows are gone: a log only; saves what was typed during the close's flush
//
// After ShowAndRun the window is gone, so that report can only reach a
// log. To show the person what did not reach the disk while the window is
// still on screen, flush from Window.SetCloseIntercept (processClosed in
// internal/driver/glfw/window.go calls the intercept instead of closing)
// on a goroutine of its own, and post back with fyne.Do, which queues a
// function for the main goroutine and returns. Its Run runs to the
// deadline on that goroutine while the window keeps drawing and taking
// keys; the Run after ShowAndRun saves what was typed meanwhile.
//
// What examples/fyne's test checks, a Fyne v2.7.1 window under Xvfb with
// a draft typed with xdotool, saved by the quit's flush only, and a flush
// held open until the test lets it end: SIGTERM, one flush for Fyne's quit
// and Notify's, exit 143, the draft on disk; SIGTERM then SIGHUP, the
// same (either may come first: both pending, the kernel delivers the
// lower-numbered); SIGINT twice, exit 130 without waiting; SIGHUP alone,
// exit 129 once the flush ended; the close button (WM_DELETE_WINDOW), the
// window on screen during the flush and the text typed meanwhile on disk
// after the second Run; a flush that fails at the close, the window kept
// and the dialog on screen.
//
// An app started as a shell's background job (`app &` in a script) runs
// with SIGINT ignored (POSIX.1-2017, XCU 2.11): Notify leaves it ignored,
// but Fyne's own signal.Notify turns it back on, so SIGINT then quits
// through Fyne alone, and a second SIGINT cannot cut the flush short: the
// Run after ShowAndRun runs it to its end (at most its deadline) and main
// returns 0 (the test checks this too).
//
// Wails v2: OnShutdown runs after the frontend is gone, just before the
// process ends; Run has its own deadline, so do not tie it to the app's ctx.
// To flush while the window is still on screen, use OnBeforeClose instead (a
// later Run then finds nothing pending and returns at once).
//
//	wails.Run(&options.App{
//		OnShutdown: func(ctx context.Context) { log.Print(hook.Run()) },
//	})
//
// Gio (read against Gio v0.10.3): the end of the window's event loop. On
// X11 and Wayland the last event a closed window delivers is an invalid
// ViewEvent: its DestroyEvent has already been processed, and a call of
// Window.Event to fetch it opens a new window (x11Window.shutdown in
// app/os_x11.go, window.close in app/os_wayland.go, Window.Event in
// app/window.go; the repository's examples/gui runs this under Xvfb).
// Elsewhere the loop ends at the DestroyEvent.
//
//	for {
//		switch e := w.Event().(type) {
//		case app.ViewEvent:
//			if !e.Valid() && (runtime.GOOS == "linux" || runtime.GOOS == "freebsd" || runtime.GOOS == "openbsd") {
//				log.Print(hook.Run())
//				return nil
//			}
//		case app.DestroyEvent:
//			log.Print(hook.Run())
//			return e.Err
//		case app.FrameEvent:
//			// lay out and draw
//		}
//	}
//
// A daemon that decides its exit itself, instead of [Hook.Notify]: the
// same stores added, then
//
//	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer cancel()
//	serve(ctx, st)
//	if r := hook.Run(); !r.Drained {
//		log.Print(r)
//		os.Exit(1)
//	}
//
// # Stability
//
// The module is v0, so the API may still change; each change is listed in
// the repository's CHANGELOG.md. What no v0 or v1 release will change: Run
// returns by its deadline even when a Flusher never does, and its Report
// has one Item per Add, in Add order, saying whether it drained and, if
// not, why. What may change: the short grace after the deadline, the text
// of Report.String, and the signals Notify handles.
package flush
