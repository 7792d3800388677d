// This file is not part of offmain: .ci/wine copies it into each package's
// Windows test binary with go test -overlay (its package clause rewritten),
// and links that binary with -ldflags=-checklinkname=0.
//
// Wine 8 answers NtSetInformationFile(FileDispositionInformationEx) with
// STATUS_NOT_IMPLEMENTED, which Go's internal/syscall/windows.Deleteat does
// not take for "unsupported" (it falls back only on STATUS_INVALID_INFO_CLASS,
// STATUS_INVALID_PARAMETER and STATUS_NOT_SUPPORTED: at_windows.go), so
// os.RemoveAll, and with it every t.TempDir cleanup, fails with "Invalid
// function". TestDeleteatFallback is the switch Go's own tests use to force
// the fallback (os/path_windows_test.go); it changes how a file is deleted
// (FileDispositionInfo instead of POSIX semantics), not what offmain does:
// offmain never calls os.RemoveAll, and os.Remove uses DeleteFileW.
package PACKAGE

import _ "unsafe" // for go:linkname

//go:linkname wineDeleteatFallback internal/syscall/windows.TestDeleteatFallback
var wineDeleteatFallback bool

func init() { wineDeleteatFallback = true }
