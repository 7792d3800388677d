//go:build !windows

package wine

// Version returns "": only a Windows binary runs under Wine.
func Version() string { return "" }
