// Command gui is a desktop chat window on Gio (gioui.org) that embeds all
// of offmain: the app a user of the library would write with a Go toolkit,
// and the measurement of a key's way to the presented frame.
//
// It has the composer example's shape and state format: a list of chats,
// each with a transcript and a composer. Every change of a composer's text
// goes to drafts.Store.Set; every scroll that has rested 150 ms goes to
// anchors.Store.Set (the item at the top of the view and the dp into it);
// agents start through qos.Start at the Agent tier and the chat list shows
// the tier qos.Inspect reads back. Closing the window, or SIGINT, SIGTERM or
// SIGHUP, runs a flush.Hook with a 2 s deadline and prints its report. With
// -sync-saves drafts and places are written on the UI goroutine instead, the
// way apps do today. OFFMAIN_TYPING_PROBE=<file.csv> records each change's
// hops; typebench drives both modes under Xvfb.
//
// Usage (from the repository root):
//
//	go run ./examples/gui [-dir DIR] [-sync-saves] [-agents] [-agent CMD] [-chats a,b,c]
//
// # Toolkit notes: Gio and offmain
//
// The UI goroutine is the one that calls app.Window.Event and
// FrameEvent.Frame. On X11, Frame renders and presents before it returns:
// the X11 driver hands the frame over without an acknowledgement channel
// (app/os_x11.go, x11Window.Frame calls ProcessFrame(frame, nil)), so
// app/window.go's validateAndProcess runs the GPU work and ctx.Present
// (eglSwapBuffers) on the caller. Whatever runs between Event and Frame
// delays the frame: that is where a save must not happen. Call
// drafts.Store.Set where the editor reports widget.ChangeEvent (drain
// Editor.Update before Editor.Layout, which otherwise consumes the events):
// Set changes memory and returns; statefile writes on its own goroutine.
//
// Callbacks from other goroutines (statefile's Options.OnError and
// File.Watch, an agent's output) must not touch widget state. They post: the
// message goes on a mutex-guarded queue, then app.Window.Invalidate, which
// Gio documents as safe for concurrent use, wakes the window, and the UI
// goroutine takes the queue at its next event (see inbox). Fyne's
// counterpart is fyne.Do, which queues a function for the UI thread and
// returns.
//
// A post must never wait for the UI goroutine (an unbuffered channel send,
// Fyne's fyne.DoAndWait). A close handler runs on the UI goroutine (Fyne's
// Window.SetCloseIntercept, Gio's ClosingEvent) and waits for the posters
// if it stops the agents whose output is being posted or closes the stores:
// statefile's Store.Close waits for a Watch callback in progress until its
// context ends. A poster waiting for the UI goroutine then deadlocks with
// it until that context ends, or for ever without one. So here posts never
// block, the queue drops posts once the window is destroyed, and the agents
// stop and the flush runs only after the event loop has returned.
//
// Quit: the window's close button (WM_DELETE_WINDOW on X11) ends in an
// invalid ViewEvent and then an app.DestroyEvent; on X11 and Wayland the
// loop returns at the ViewEvent (Window.Event, called once more, would open
// a new window; see viewEnds) and the flush hook runs. A signal does
// not run the hook from its own goroutine while the window is open: it posts
// a close, and the UI goroutine calls Window.Perform(system.ActionClose),
// which on X11 sends WM_DELETE_WINDOW to the window itself, so both take
// the same path. Call Perform on the UI goroutine: the X11 driver's
// Window.Run runs the function on the caller's goroutine (app/os_x11.go),
// so from elsewhere it would make Xlib calls beside the UI goroutine's. If
// the UI goroutine has not closed the window 3 s after a signal (it is stuck
// in a synchronous save, say), the signal's goroutine runs the hook itself
// and exits. app.Main owns the main goroutine and never returns; the window
// runs on another goroutine, which ends the process with os.Exit after the
// flush.
//
// Keys, in order: Gio hands each filter's events out separately, and its X11
// driver ranges every letter it reads before a frame from the caret the frame
// before left (see typing.go). So the app reads its keys in one gtx.Event loop
// in the order they were pressed: the tab (a focus key in Gio, which only a
// key.Filter naming it gets; here it is text), enter (sends) and shift+enter
// (a new line), ctrl+tab and ctrl+shift+tab (chat switches), ctrl+g, and every
// printable press, which the editor never filters (it takes text from
// EditEvents). After the editor has applied the frame's events, the run of
// runes those presses typed is put at the caret the frame began with, each tab
// and newline where it was pressed among them, each enter sending what stood
// before it; where the editor's text does not agree with the presses (a key
// Gio gives no name, an input method, a deletion in the frame) nothing moves,
// a tab goes at the caret and enter sends the whole text. Without this a tab
// typed among fast letters (xdotool at 20 ms on a loaded machine) landed
// behind the letters typed after it, and once behind a line typed right after
// enter. A chat switch executes key.FocusCmd after every composer not shown
// has taken its events in the frame, so Gio's router defers it to the end of
// the frame and freezes the events queued after it, routing them to the new
// focus at the next frame (Router.execute and Router.Frame,
// io/input/router.go): keys typed before the switch stay with the old
// composer, and a paste or a key right after it reaches the new one, with no
// wait for a frame. Executed before any composer had polled, the FocusCmd
// applied at once and re-routed the later events at once, and a second switch
// in the same frame re-routed a paste already queued for the first away from
// it (the pasted chat's draft came out empty in 1 run of 10 under load). What
// Gio gives no way to do: several switches queued before one frame with keys
// between them (ctrl+tab, ctrl+tab, ctrl+v faster than a frame). The router
// replays the events it froze at the first switch all at once into the next
// frame's state (Router.Frame collapses them), where they are matched against
// the focus that switch left, and no FocusCmd re-routes events already in a
// frame's state: the paste went to the chat between (1 run in 24 under load).
// The end-to-end test switches once each way. A SelectionCmd right after the
// FocusCmd, which clears the router's caret, gives the driver the new
// composer's caret at the same frame's end. A clipboard paste is one event and
// keeps its tabs and newlines in place.
//
// Frames for other things: every post wakes the window, and Gio draws the
// whole window in each frame (with llvmpipe, typebench measured 19 ms for a
// window showing the agents' lines against 6 ms for an empty one). A key
// that arrives while such a frame is drawn waits for it: with three agents
// printing a line a second, 1.3-1.4 frames were drawn per typed key. Agents
// that stream faster want their output coalesced into a few frames a second
// (posts queue; the UI goroutine takes them all at its next event).
//
// Typing under Xvfb: xdotool 3.20160805 (Debian 12) types a newline as the
// Linefeed keysym on a scratch keycode, which Gio's X11 key mapping does not
// name, so "xdotool type" of text with a newline drops it; "xdotool key
// Return" sends. A typed tab arrives as the Tab key. A real paste (the clipboard, ctrl+v)
// inserts newlines and tabs into the editor without sending; the Go fonts
// have no glyph for a tab, so Gio draws a box for it.
package main
