// Package fusemount mounts the in-process FUSE filesystems that tests use
// (github.com/hanwen/go-fuse/v2: faultfs, powercut), and unmounts them
// even when a descriptor is still open on the mount. It is Linux only: the
// mount is mount(2) of /dev/fuse, and the forced unmount is Linux's
// umount2(2).
package fusemount
