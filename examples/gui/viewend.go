//go:build !darwin && !android

package main

// viewEnds says whether an invalid ViewEvent is the window's end. Gio
// v0.10.3 sends one only as a window goes, right before its DestroyEvent:
// X11 in x11Window.shutdown (app/os_x11.go), Wayland in window.close
// (app/os_wayland.go), Windows on WM_DESTROY (app/os_windows.go). By then
// the DestroyEvent has cleared the window's driver, and Window.Event, called
// once more to fetch it, sees no driver and opens a new window
// (Window.init, app/window.go): a second window flashes up at every close,
// and if it cannot be opened Gio delivers a second DestroyEvent to a
// redraw timer that already stopped, and the UI goroutine blocks for good.
// So the loop ends at the invalid ViewEvent instead.
const viewEnds = true
