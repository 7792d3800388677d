package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	gioapp "gioui.org/app"
	"gioui.org/io/system"
	"gioui.org/op"
	"gioui.org/unit"
)

// quitMsg asks the UI goroutine to close the window, as the window's close
// button does; the signal watcher posts it.
type quitMsg struct{ sig os.Signal }

// newWindow opens the app's window. Its Invalidate becomes the inbox's wake.
func (a *app) newWindow() *gioapp.Window {
	w := new(gioapp.Window)
	w.Option(gioapp.Title("offmain gui"), gioapp.Size(unit.Dp(800), unit.Dp(600)))
	a.inbox.mu.Lock()
	a.inbox.wake = w.Invalidate
	a.inbox.mu.Unlock()
	return w
}

// loop is the UI goroutine: it runs until the window is destroyed (its close
// button, or a quitMsg) and returns why, when that was not a close (see
// endedErr). Nothing on it waits for the disk unless -sync-saves asks for
// exactly that.
func (a *app) loop(w *gioapp.Window) error {
	var ops op.Ops
	first := true
	closing := false // a close was asked for (the close button, a quitMsg)
	for {
		e := w.Event()
		arrived := time.Now()
		for _, m := range a.inbox.take() {
			if _, ok := m.(quitMsg); ok {
				// On X11 Perform posts WM_DELETE_WINDOW to the window itself;
				// the window's end comes back through w.Event.
				w.Perform(system.ActionClose)
				continue
			}
			a.ui.handle(m)
		}
		switch e := e.(type) {
		case gioapp.DestroyEvent:
			a.inbox.close()
			return e.Err
		case *gioapp.ClosingEvent:
			closing = true
		case gioapp.ViewEvent:
			if viewEnds && !e.Valid() {
				// The window is gone and its DestroyEvent is queued; asking
				// Window.Event for it would open a new window (see viewEnds).
				a.inbox.close()
				return endedErr(closing)
			}
		case gioapp.FrameEvent:
			gtx := gioapp.NewContext(&ops, e)
			a.ui.update(gtx, arrived)
			a.ui.layout(gtx)
			a.ui.scrolled(gtx)
			e.Frame(gtx.Ops)
			a.probe.framed(arrived, time.Now())
			if first {
				first = false
				fmt.Fprintf(os.Stderr, "offmain-gui: first frame presented (%dx%d px)\n", e.Size.X, e.Size.Y)
			}
		}
	}
}

// errWindowLost is the loop's error when the window went without a close
// request: on Wayland, a display connection that failed (window.close in
// Gio's app/os_wayland.go). Gio puts the cause in the DestroyEvent, which
// the loop cannot fetch (see viewEnds), so this says what is known.
var errWindowLost = errors.New("the window ended without a close request (its display connection was lost?)")

// endedErr is the loop's result at the invalid ViewEvent that ends the
// window: nil after a ClosingEvent, errWindowLost without one. A GPU
// failure makes Gio close the window the same way a close button does
// (Window.processFrame performs system.ActionClose, app/window.go), so it
// ends the app with nil and its cause unseen.
func endedErr(closing bool) error {
	if closing {
		return nil
	}
	return errWindowLost
}
