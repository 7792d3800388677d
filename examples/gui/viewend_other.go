//go:build !((linux && !android) || freebsd || openbsd)

package main

// viewEnds is false where Gio's drivers hand events over through its event
// loop (app/os.go, eventLoop.deliverEvent): Windows, macOS and iOS, whose
// native thread waits in the invalid ViewEvent's delivery until the app
// calls Window.Event again, and gets to the DestroyEvent only then, its
// driver still set; Android and macOS also detach a view while the window
// lives (app/os_android.go, gio_onAttached in app/os_macos.go). There the
// loop waits for the DestroyEvent. None of these platforms was run here.
const viewEnds = false
