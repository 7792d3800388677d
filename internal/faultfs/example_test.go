//go:build linux

package faultfs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/offmain/offmain/internal/faultfs"
)

// A test would call faultfs.MountT(t), which makes the directories and
// unmounts at cleanup; an example has no t.
func Example() {
	backing, _ := os.MkdirTemp("", "backing")
	defer os.RemoveAll(backing)
	dir, _ := os.MkdirTemp("", "mnt")
	defer os.RemoveAll(dir)
	fsys, err := faultfs.Mount(dir, backing)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fsys.Unmount()
	path := filepath.Join(fsys.Dir(), "state.json")

	clear := fsys.Fail(faultfs.Fsync, syscall.EIO, faultfs.Base("state.json"))
	err = writeAndSync(path)
	fmt.Println("fsync fails with EIO:", errors.Is(err, syscall.EIO))
	clear()
	fmt.Println("once cleared:", writeAndSync(path))

	h := fsys.Hang(faultfs.Fsync, faultfs.Base("state.json"))
	done := make(chan error, 1)
	go func() { done <- writeAndSync(path) }()
	<-h.Blocked()
	fmt.Println("fsync is hung; another file:", writeAndSync(filepath.Join(fsys.Dir(), "other.json")))
	h.Release()
	fmt.Println("released:", <-done)
	// Output:
	// fsync fails with EIO: true
	// once cleared: <nil>
	// fsync is hung; another file: <nil>
	// released: <nil>
}

func writeAndSync(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString("{}"); err != nil {
		return err
	}
	return f.Sync()
}
