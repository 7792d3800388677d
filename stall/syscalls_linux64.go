//go:build linux && (amd64 || arm64)

package stall

import "golang.org/x/sys/unix"

// The calls of os.Stat, os.Lstat and os.Rename on the 64-bit desktop
// architectures, which not every Linux architecture has under these
// names (386 and arm have fstatat64; riscv64 has no renameat).
func init() {
	fileCalls[unix.SYS_NEWFSTATAT] = fileCall{name: "newfstatat", at: true}
	fileCalls[unix.SYS_RENAMEAT] = fileCall{name: "renameat", at: true}
}
