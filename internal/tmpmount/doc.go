// Package tmpmount is a test harness that puts real filesystems into the
// states that make saving fail, for a test running as root on Linux:
//
//   - [Tmpfs]: a tmpfs of a given size, for a real ENOSPC (disk full).
//   - [SetReadOnly]: a read-only mount of a directory, for EROFS; it can
//     be made writable again.
//   - [SetImmutable]: the immutable attribute (chattr +i) of a directory,
//     for a directory that even root cannot write: creating, renaming or
//     removing an entry in it fails with EPERM.
//
// In a test:
//
//	dir := tmpmount.Tmpfs(t, "64k")     // a save larger than 64 KiB gets ENOSPC
//	tmpmount.SetReadOnly(t, dir, true)  // EROFS from now on
//	tmpmount.SetReadOnly(t, dir, false) // writable again
//	tmpmount.SetImmutable(t, dir, true) // EPERM for creating, renaming, removing
//
// Everything is undone when the test completes. Each helper skips the
// test, with the reason, when the process is not root or the machine
// forbids the mount; a failure to undo is reported as a test error. The
// package has no API outside Linux.
//
// # A directory the process cannot write
//
// Root passes permission bits (CAP_DAC_OVERRIDE), so chmod 0500 is no
// fault for it. The immutable attribute binds root too (only setting and
// clearing it needs CAP_LINUX_IMMUTABLE), acts on the whole process at
// once, whatever thread a writer goroutine runs on, and is undone by one
// ioctl. tmpfs has it since Linux 6.0 (shmem_fileattr_set in mm/shmem.c),
// ext4 always. The error is EPERM where an unprivileged user meets
// EACCES; both satisfy errors.Is(err, fs.ErrPermission).
//
// The alternatives fail in practice: dropping privileges with setresuid
// is process-wide in Go (syscall.AllThreadsSyscall), so it would also
// strip the FUSE daemon and the parallel tests of the same binary; and a
// child re-executed as an unprivileged user (exec.Cmd's
// SysProcAttr.Credential) cannot even run the test binary, which go test
// leaves in a work directory of mode 0700.
package tmpmount
