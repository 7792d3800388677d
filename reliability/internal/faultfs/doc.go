// Package faultfs is a test harness: a FUSE loopback filesystem over a
// backing directory whose write, fsync, rename and close can be made to
// fail with a chosen errno or to block until released, for every file or
// only for the paths a [Match] selects ([Base], [Path], [Glob]).
//
// The filesystem is served by a helper process, the test binary
// re-executed (internal/fusemount), never by the test process: a process
// that makes system calls on a FUSE mount it serves itself can deadlock
// (go-fuse's fs/api.go, "Deadlocks"). [FS.Fail], [FS.Hang] and
// [Hang.Release] return once the helper applies them, so they hold for
// every system call the test makes after them; [Hang.Blocked] is the
// helper's word that an operation has blocked.
//
// It is Linux only (the package has no API elsewhere) and needs /dev/fuse
// and the right to mount, that is root or CAP_SYS_ADMIN: it mounts with
// mount(2) directly, since this project's machines have no fusermount.
// [MountT] skips the test with the reason where that is missing.
//
//	fsys := faultfs.MountT(t)                        // a loopback of a temp dir
//	clear := fsys.Fail(faultfs.Fsync, syscall.EIO, nil)
//	err := f.Sync()                                  // EIO, from fsync(2)
//	clear()
//	h := fsys.Hang(faultfs.Fsync, faultfs.Base("a.json"))
//	go save("a.json")                                // blocks in fsync(2)
//	<-h.Blocked()                                    // the daemon holds it now
//	h.Release()                                      // and now it proceeds
//
// # Where each fault surfaces
//
// The kernel forwards each operation to the daemon synchronously inside
// the caller's system call, so an injected errno is that call's result:
//
//   - [Write]: write(2), pwrite(2) and writev(2) return it. Writes are
//     not absorbed by the page cache, because the mount negotiates
//     neither a writeback cache (FUSE_WRITEBACK_CACHE) nor passthrough,
//     which go-fuse would otherwise enable as root: with it the kernel
//     writes the backing file itself and the faults never see a write
//     (checked: a write fault then had no effect). copy_file_range(2),
//     which Go's io.Copy uses between files, is refused, so the copy
//     falls back to writes, which fail too. Writes through a shared mmap
//     reach the daemon only at writeback, and their error surfaces at the
//     next msync(2) (or fsync(2)), once.
//   - [Fsync]: fsync(2) and fdatasync(2) return it, on files (FUSE_FSYNC)
//     and on directories (FUSE_FSYNCDIR).
//   - [Rename]: rename(2) and renameat2(2) return it (FUSE_RENAME).
//   - [Close]: close(2) returns it (FUSE_FLUSH, sent on each close of a
//     descriptor, dup(2)s included). The file stays closed: the error is
//     only reported.
//
// An errno of ENOSYS is refused (it panics): the kernel takes ENOSYS from
// FUSE_FSYNC or FUSE_FLUSH as "not implemented", stops sending them for
// the rest of the mount and reports success instead (fs/fuse/file.c).
//
// # Caveats
//
// Entry, attribute and negative-lookup caching are off, so a test may
// change [FS.Backing] directly and see it through [FS.Dir] at once.
//
// A hung operation holds the kernel's lock on its inode, as fuse_fsync
// and fuse_dir_fsync (fs/fuse/file.c, fs/fuse/dir.c) take inode_lock: a
// hung fsync of a file blocks writes to that file and renames onto it,
// but not reads of it nor anything on other files; a hung fsync of a
// directory blocks creating, renaming and removing entries in it, listing
// it and looking up names the kernel has not cached, while existing files
// in it open, read and write normally. So, to hang one path while the
// others work, match the files ([Base] does), not their directory.
//
// Even SIGKILL does not end a FUSE request the daemon has received: the
// killed process waits for the reply (request_wait_answer in
// fs/fuse/dev.c). faultfs answers the FUSE_INTERRUPT the signal sends
// with EINTR at once, so a process killed while hung dies without a
// release (see [FS.Hang] for other signals).
//
// [FS.Unmount] releases every hang first. If a descriptor is still open
// on the mount, it aborts the connection and detaches the mount, so that
// nothing stays mounted and no process survives, and reports EBUSY. If
// the helper died, the mount is dead (ENOTCONN) and Unmount detaches it.
// The helper ends with the test binary, even one killed with SIGKILL.
package faultfs
