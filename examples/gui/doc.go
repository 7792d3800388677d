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
// Focus: a chat switch moves the keyboard focus with key.FocusCmd, which Gio
// applies in the frame that executes it; keys that reach Gio before that
// frame go to the composer focused before, so a switch followed at once by
// typing (a replayed macro, a test) must wait for the frame. Execute the
// FocusCmd before the new editor's Update in that frame: the FocusEvent
// then makes the editor send its selection to Gio's router at once;
// executed after, the router kept a stale caret and the keys after the
// switch landed out of order ("second tab" became "cond tabse"). Tab is a
// focus key in Gio and reaches only a key.Filter that names it: here it is
// text (a tab in the draft), and ctrl+tab switches chats. Gio hands each
// filter's events out separately, so a key the app handles beside the
// editor's (the tab) is ordered with the editor's own only frame by frame:
// when keys come faster than frames (xdotool type at 20 ms on a loaded
// machine) the letters typed after a tab land before it. A clipboard paste
// is one event and keeps its tabs and newlines in place.
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
