//go:build windows

package wine

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

var wineGetVersion = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version")

// Version returns Wine's version ("8.0") when the process runs under Wine,
// and "" on Windows.
func Version() string {
	if wineGetVersion.Find() != nil {
		return "" // Windows' ntdll has no such export
	}
	r, _, _ := wineGetVersion.Call() // const char *wine_get_version(void)
	if r == 0 {
		return "unknown"
	}
	// r points at a constant string inside ntdll, not at Go memory: read
	// it through a copy of the pointer's bits.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&r))
	return windows.BytePtrToString((*byte)(p))
}
