// Package powercut is a test harness: a FUSE filesystem that keeps, beside
// what its files hold now, what a disk would hold if the power went, and
// can cut the power between any two operations. The crash tests that kill
// a process with SIGKILL cannot tell a writer that fsyncs from one that
// never does, since the kernel's page cache outlives the process; after a
// cut here, only what was made durable is sure to be there.
//
// It follows LazyFS (Ramos et al., "When Amnesia Strikes", VLDB 2024: a
// FUSE filesystem with its own page cache that forgets what was not
// fsynced) for file data, and ALICE (Pillai et al., "All File Systems Are
// Not Created Equal", OSDI 2014) for directory operations, which may be
// lost or reordered unless the directory is fsynced.
//
// # The model
//
//   - Data written to a file (write(2), ftruncate(2), open with O_TRUNC)
//     is durable once that file is fsynced (fsync(2) or fdatasync(2)). At
//     a cut, a file written since its last fsync holds the content of that
//     fsync (nothing, if it never had one), or a torn mix: the new bytes
//     up to a random byte boundary, which may be the end, and the old ones
//     after it, at the old or the new size, zeros where neither had a byte
//     (LazyFS's "clear" and "torn-op" faults).
//   - A directory operation (create, mkdir, rename, unlink, rmdir) changes
//     a directory's entries durably only once that directory is fsynced
//     (fsync(2) on a descriptor of the directory; see fsync(2): "Calling
//     fsync() does not necessarily ensure that the entry in the directory
//     containing the file has also reached disk"). An fsync of a file
//     does not make its name durable, and an fsync of a directory does
//     not make durable its own entry in its parent. A rename between two
//     directories is durable once either is fsynced.
//   - At a cut, any subset of the directory operations not yet durable
//     survives, as long as the operations on each name survive in order
//     (a prefix of them): a rename survives only with the create of the
//     name it moves. A rename is one step: a rename over a name leaves
//     the old entry or the new one, never neither nor both.
//   - What survives is reached from the root through durable entries
//     only: a file in a directory whose own entry was lost is lost too,
//     and a file whose unlink was lost is back with its durable content.
//   - Attributes other than the size (mode, times) are not modelled: they
//     survive as they were. Hard links, symbolic links, special files,
//     extended attributes, RENAME_EXCHANGE and mmap writes are not
//     supported (they fail).
//
// [Options.Forget] replaces the draws by the worst case for a writer that
// relies on what it did not fsync: everything not durable is lost.
// [Options.IgnoreFsync] and [Options.IgnoreDirFsync] make fsyncs of files
// or of directories succeed and do nothing, so that a correct writer can be
// run as if it lacked them.
//
// # Cuts
//
// A cut comes from [FS.Cut], or from a [Trigger] armed with [FS.Arm]: at
// the N-th counted operation from now ([Op]: the ones that change the disk
// or make it durable), optionally only of one kind, just before or just
// after it. Each operation is atomic with respect to a cut. At the cut
// the backing directory ([FS.Backing]) is rewritten to what the disk holds
// after power returns, and every operation fails with EIO, so a program
// that was writing finds its calls failing and can be stopped (its Flush
// fails, its goroutines end). [FS.PowerOn] then serves the backing
// directory again, all of it durable; descriptors and directories opened
// before the cut stay dead (EIO), as after a reboot. The same mount serves
// every power cycle, so thousands of cuts take seconds.
//
//	fsys := powercut.MountT(t, powercut.Options{Seed: seed})
//	done := fsys.Arm(powercut.Trigger{N: 1 + rng.IntN(40)})
//	... save, flush, until <-done ...
//	fsys.PowerOn()
//	... open again and check what a flush acknowledged ...
//
// The filesystem is served by a helper process, the test binary
// re-executed (internal/fusemount), never by the process under test: a
// process that makes system calls on a FUSE mount it serves itself can
// deadlock (go-fuse's fs/api.go, "Deadlocks"; go.dev/issue/21014). [FS.Arm],
// [FS.Cut] and [FS.PowerOn] are calls to the helper that return once it
// has done them. A cut a trigger makes is counted ([FS.Cuts]) in memory
// both processes share before the operation that made it returns, and
// comes back as an event that closes Arm's channel a little later.
//
// It is Linux only and needs /dev/fuse and the right to mount (root or
// CAP_SYS_ADMIN): it mounts with mount(2) directly, as there is no
// fusermount on this project's machines. [MountT] skips the test with the
// reason where that is missing.
//
// # Checking a writer
//
// [Torture] saves a stream of values through a [Writer], flushes at random
// and cuts at a random operation, again and again; after each cut it
// checks what power-on shows against what a flush acknowledged (see
// [Counts]).
package powercut
