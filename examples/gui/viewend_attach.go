//go:build darwin || android

package main

// viewEnds is false where a window's view detaches and attaches again while
// the window lives (gio_onAttached in Gio's app/os_macos.go, the surface's
// destruction in app/os_android.go): there an invalid ViewEvent is not the
// window's end, and the loop waits for the DestroyEvent. Neither platform
// was run here.
const viewEnds = false
