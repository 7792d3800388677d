//go:build linux

package stall

import "golang.org/x/sys/unix"

// A fileCall is a system call that concerns a file, and where its file is.
type fileCall struct {
	name string // as syscalls(2) names it
	at   bool   // the path is the second argument, relative to the directory fd in the first; else the first is the fd
}

// fileCalls are the system calls whose file the sampler finds: those of
// the standard library's file I/O (os, internal/poll, syscall), by their
// numbers on this architecture. The others (futex, epoll_pwait, ppoll,
// nanosleep) concern no file and are named from the Go stack instead.
var fileCalls = map[uint64]fileCall{
	unix.SYS_READ: {name: "read"}, unix.SYS_WRITE: {name: "write"},
	unix.SYS_PREAD64: {name: "pread64"}, unix.SYS_PWRITE64: {name: "pwrite64"},
	unix.SYS_READV: {name: "readv"}, unix.SYS_WRITEV: {name: "writev"},
	unix.SYS_PREADV: {name: "preadv"}, unix.SYS_PWRITEV: {name: "pwritev"},
	unix.SYS_PREADV2: {name: "preadv2"}, unix.SYS_PWRITEV2: {name: "pwritev2"},
	unix.SYS_FSYNC: {name: "fsync"}, unix.SYS_FDATASYNC: {name: "fdatasync"},
	unix.SYS_SYNCFS: {name: "syncfs"}, unix.SYS_FTRUNCATE: {name: "ftruncate"},
	unix.SYS_FALLOCATE: {name: "fallocate"}, unix.SYS_FLOCK: {name: "flock"},
	unix.SYS_FCNTL: {name: "fcntl"}, unix.SYS_GETDENTS64: {name: "getdents64"},
	unix.SYS_FSTAT: {name: "fstat"}, unix.SYS_FSTATFS: {name: "fstatfs"},
	unix.SYS_LSEEK: {name: "lseek"}, unix.SYS_CLOSE: {name: "close"},
	unix.SYS_IOCTL: {name: "ioctl"}, unix.SYS_COPY_FILE_RANGE: {name: "copy_file_range"},
	unix.SYS_SENDFILE: {name: "sendfile"}, unix.SYS_SPLICE: {name: "splice"},
	unix.SYS_FGETXATTR: {name: "fgetxattr"},
	unix.SYS_OPENAT:    {name: "openat", at: true}, unix.SYS_OPENAT2: {name: "openat2", at: true},
	unix.SYS_STATX: {name: "statx", at: true}, unix.SYS_READLINKAT: {name: "readlinkat", at: true},
	unix.SYS_UNLINKAT: {name: "unlinkat", at: true}, unix.SYS_MKDIRAT: {name: "mkdirat", at: true},
	unix.SYS_RENAMEAT2: {name: "renameat2", at: true}, unix.SYS_FACCESSAT: {name: "faccessat", at: true},
	unix.SYS_FACCESSAT2: {name: "faccessat2", at: true}, unix.SYS_FCHMODAT: {name: "fchmodat", at: true},
	unix.SYS_FCHOWNAT: {name: "fchownat", at: true}, unix.SYS_UTIMENSAT: {name: "utimensat", at: true},
	unix.SYS_MKNODAT: {name: "mknodat", at: true},
}
