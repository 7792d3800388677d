// Package flush is the quit-time hook: one deadline over everything that
// must reach the disk, and everything that must end, before the process
// exits.
//
// An app adds each store it saves through with [Hook.Add] (a saver) and
// what it ends only when it exits with [Hook.AddStop] (a stopper: its
// agents, a terminal toolkit's own quit). [Hook.Run] flushes the savers
// and stops nothing: it is the save before a "not saved, quit anyway?"
// prompt, which the person may answer with "stay". [Hook.Exit] flushes the
// savers and runs the stoppers, once the app has decided to exit, and
// [Hook.Notify] calls it on SIGINT, SIGTERM or SIGHUP and exits with
// 128+signal. Each returns by its deadline even when a disk write never
// finishes, with a [Report] that says whether everything was saved, and
// whether everything stopped cleanly, and names each file not saved once.
//
//	hook := flush.New(flush.Options{})
//	st := statefile.NewStore(statefile.Options{OnError: showProblem})
//	hook.Add("state", st)
//	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
//	if err != nil { ... }
//	hook.Add("drafts", d)
//	agents := &qos.Group{OnError: st.Report}
//	hook.AddStop("agents", flush.Func(agents.Stop))
//	stop := hook.Notify()
//	defer stop()
//
// Add every store the app saves through: the statefile.Store, and each
// drafts.Store and anchors.Store on it, which keep the last edits in memory
// until they settle. Add each as soon as it exists, before its first save,
// and call Notify once the Hook exists: a signal runs only what was added
// by then, and Notify's exit ends the process, so whatever must happen at
// quit belongs in the Hook.
//
// Why a deadline: Chromium's ImportantFileWriter blocks shutdown on a
// pending write with no limit, Firefox's AsyncShutdown crashes the browser
// after 60 s (toolkit/components/asyncshutdown), and Android's
// QueuedWork.waitToFinish stalls an activity's stop into an ANR. A desktop
// app should instead give the disk a short, fixed time, then exit and say
// what was lost.
//
// # Toolkits
//
// A toolkit's quit path calls Exit (or Run first, to ask the person); one
// that catches signals itself quits beside Notify, and an Exit it calls
// joins Notify's. The repository's example apps are the wiring, compiled
// and driven in CI: examples/fyne (Fyne: Notify beside Fyne's own SIGINT
// and SIGTERM handler, Run from the window's close intercept, Exit after
// ShowAndRun), examples/gui (Gio: Exit at the end of the window's event
// loop) and examples/composer (Bubble Tea: the program's Quit added as a
// stopper, so the terminal is restored before Notify's report and exit).
// The examples of [Hook.Exit] show the same for Wails and a daemon.
//
// # Stability
//
// The module is v0, so the API may still change; each change is listed in
// the repository's CHANGELOG.md. What no v0 or v1 release will change:
// Run and Exit return by their deadline even when a Flusher never does;
// their Report has one Item per Add (and, for Exit, per AddStop), in
// order, saying whether it drained and, if not, why; Run never runs a
// stopper; Notify exits with 128+signal, only the same interactive signal
// twice gives up on the disk, and a signal ignored when Notify is called
// stays ignored. What may change: the short grace after the deadline, the
// text of Report.String, and the signals Notify handles.
package flush
