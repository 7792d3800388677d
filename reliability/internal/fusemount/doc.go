// Package fusemount serves the FUSE filesystems that tests use
// (github.com/hanwen/go-fuse/v2: a plain loopback here, faultfs and
// powercut) from a helper process, mounts them and unmounts them, even
// when a descriptor is still open on the mount or the helper died. It is
// Linux only: the mount is mount(2) of /dev/fuse, and the forced unmount
// is Linux's umount2(2).
//
// # Why a helper process
//
// A process must not use a FUSE mount it serves itself. The Go runtime
// assumes some system calls never block, and a call that reaches a FUSE
// daemon blocks until the daemon answers; when the daemon is the same
// process, its goroutines may be the ones that cannot run (go-fuse's
// fs/api.go, "Deadlocks": fork and exec, epoll, mmap; go.dev/issue/21014;
// go-fuse issue 261 and bazil/fuse issue 264 give the same advice). So
// each mount is served by the test binary re-executed: [Start] runs it
// with an environment guard that a [Helper] call in an init function of
// the filesystem's package recognises, and the two talk over the
// helper's standard input and output (one JSON value a line). The test
// process only makes system calls on the mount, as an application would.
//
// # A loopback with the kernel's caches on
//
// [Loopback] and [LoopbackT] mount go-fuse's loopback of a backing
// directory with go-fuse's usual cache timeouts (entries and attributes
// 1 s; see [LoopbackOptions]), the setting of FUSE homes and cloud drives
// built on it. A test plays a second client of a network filesystem by
// changing the backing directory directly: through the mount, stat(2)
// and lstat(2) keep showing what they last showed until the timeout
// passes, or until the file is read through the mount (on Linux 6.18 a
// read makes the kernel fetch the attributes anew), while a read gets the
// new bytes. Reads and writes go through the helper: passthrough, which
// go-fuse enables as root on Linux 6.9 and later, is off.
//
//	lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
//	p := filepath.Join(lb.Dir(), "state.json")
//	os.WriteFile(p, []byte(`{"n":1}`), 0o600)    // through the mount
//	st, _ := os.Lstat(p)                         // cached for 1 s
//	tmp := filepath.Join(lb.Backing(), ".tmp")   // another client's
//	os.WriteFile(tmp, []byte(`{"n":2}`), 0o600)  // same-size replacement
//	os.Rename(tmp, filepath.Join(lb.Backing(), "state.json"))
//	st2, _ := os.Lstat(p)                        // st's inode and mtime still
//	b, _ := os.ReadFile(p)                       // {"n":2}; lstat now sees it
//
// # Writing a helper
//
// A filesystem package registers its server in an init function, and
// its mount calls [Start] with the same kind:
//
//	func init() { fusemount.Helper("faultfs", serve) }
//
//	// In the helper: mount with Serve, answer the parent's calls.
//	func serve(dir, backing string, config json.RawMessage, notify func(string, any)) (fusemount.Server, error)
//
//	// In the test process: start the helper, call it, get its events.
//	p, err := fusemount.Start("faultfs", dir, backing, config, onEvent)
//	err = p.Call("fail", args, &result)
//	err = p.Unmount()
//
// Calls reach the helper one at a time, in order; a call returns once the
// helper has answered it, so what it set applies to every system call the
// test makes afterwards. Events (a hung operation has blocked, the power
// was cut) arrive in the order the helper sent them.
//
// # Ends
//
// [Process.Unmount] asks the helper to unmount and waits for it to exit;
// if a descriptor is still open, the helper aborts the FUSE connection
// and detaches the mount. If the helper has died, the test process
// detaches the mount itself. The helper ends with its test binary, even
// one killed with SIGKILL: it sees its input close, and the kernel sends
// it SIGTERM (PR_SET_PDEATHSIG); either way it unmounts and exits.
// [MountT] ties a mount to a test's cleanup and skips the test where FUSE
// cannot be mounted: it needs /dev/fuse and root or CAP_SYS_ADMIN, as it
// calls mount(2) itself (there is no fusermount to fall back on).
package fusemount
