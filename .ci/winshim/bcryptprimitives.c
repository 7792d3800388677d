/*
 * bcryptprimitives.dll for Wine 8, which lacks it. Built by .ci/wine with
 * Debian's gcc-mingw-w64-x86-64 and copied into the Wine prefix's system32;
 * it is never part of offmain's build.
 *
 * Since Go 1.22 the Windows runtime gets its random bytes from ProcessPrng
 * in bcryptprimitives.dll (src/runtime/os_windows.go) and dies at start
 * when the DLL is missing. Windows documents ProcessPrng as always
 * returning TRUE ("Bcryptprimitives.dll ProcessPrng", learn.microsoft.com);
 * here it fills the buffer from SystemFunction036 (RtlGenRandom) in
 * advapi32, which Wine implements, and reports a failure if that fails.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
