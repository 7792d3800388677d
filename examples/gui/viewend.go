//go:build (linux && !android) || freebsd || openbsd

package main

// viewEnds says whether an invalid ViewEvent is the window's end. Gio
// v0.10.3's X11 and Wayland drivers (the platforms of app/os_unix.go, whose
// build constraint this file copies) send one only as a window goes:
// x11Window.shutdown (app/os_x11.go) and window.close (app/os_wayland.go)
// process the invalid ViewEvent and then the DestroyEvent before the
// ViewEvent reaches the app. The DestroyEvent has cleared the window's
// driver by then, and Window.Event, called once more to fetch it, sees no
// driver and opens a new window (Window.Event and Window.init,
// app/window.go): a second window flashes up at every close, and if it
// cannot be made, Gio processes a second DestroyEvent, which blocks on the
// redraw timer goroutine the first one stopped, and the UI goroutine hangs
// for good. So the loop ends at the invalid ViewEvent instead.
const viewEnds = true
