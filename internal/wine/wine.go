// Package wine tells a test whether it runs under Wine, the Windows
// compatibility layer that runs this module's windows/amd64 test binaries
// on Linux, and skips the tests that meet one of Wine's limitations there.
//
// Detection asks the process itself, not the environment: Wine's ntdll.dll
// exports wine_get_version (dlls/ntdll/version.c in Wine's source), which
// Windows' ntdll.dll does not. So a test binary copied to a Windows
// machine runs every test, and one run under Wine skips only what Wine
// cannot do, each with the reason.
package wine

import "testing"

// Skip skips t when the process runs under Wine, saying why: the Wine
// limitation that makes the test meaningless there. On Windows and every
// other system it does nothing.
func Skip(t testing.TB, why string) {
	t.Helper()
	if v := Version(); v != "" {
		t.Skipf("on Wine %s: %s", v, why)
	}
}
