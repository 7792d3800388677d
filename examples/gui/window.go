package main

import (
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
// button, or a quitMsg) and returns the window's error. Nothing on it waits
// for the disk unless -sync-saves asks for exactly that.
func (a *app) loop(w *gioapp.Window) error {
	var ops op.Ops
	first := true
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
		case gioapp.ViewEvent:
			if viewEnds && !e.Valid() {
				// The window is gone and its DestroyEvent is queued; asking
				// Window.Event for it would open a new window (see viewEnds).
				// Its error goes with it: nil for a close, but a GPU failure
				// that made Gio close the window, or a lost Wayland display,
				// ends the app here without its cause.
				a.inbox.close()
				return nil
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
