//go:build linux

package faultfs_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/offmain/offmain/reliability/internal/faultfs"
)

// A test would call faultfs.MountT(t), which makes the directories and
// unmounts at cleanup; an example has no t. Mounting needs root (mount(2)
// without fusermount), so this example has no Output line that `go test`
// would check for every user: TestExample runs it and checks what it prints
// wherever FUSE can mount.
func Example() {
	if err := showFaults(os.Stdout); err != nil {
		fmt.Println(err)
	}
}

// exampleOutput is what Example prints.
const exampleOutput = `fsync fails with EIO: true
once cleared: <nil>
fsync is hung; another file: <nil>
released: <nil>
`

func showFaults(w io.Writer) error {
	backing, _ := os.MkdirTemp("", "backing")
	defer os.RemoveAll(backing)
	dir, _ := os.MkdirTemp("", "mnt")
	defer os.RemoveAll(dir)
	fsys, err := faultfs.Mount(dir, backing)
	if err != nil {
		return err
	}
	defer fsys.Unmount()
	path := filepath.Join(fsys.Dir(), "state.json")

	clear := fsys.Fail(faultfs.Fsync, syscall.EIO, faultfs.Base("state.json"))
	err = writeAndSync(path)
	fmt.Fprintln(w, "fsync fails with EIO:", errors.Is(err, syscall.EIO))
	clear()
	fmt.Fprintln(w, "once cleared:", writeAndSync(path))

	h := fsys.Hang(faultfs.Fsync, faultfs.Base("state.json"))
	done := make(chan error, 1)
	go func() { done <- writeAndSync(path) }()
	<-h.Blocked()
	fmt.Fprintln(w, "fsync is hung; another file:", writeAndSync(filepath.Join(fsys.Dir(), "other.json")))
	h.Release()
	fmt.Fprintln(w, "released:", <-done)
	return nil
}

func TestExample(t *testing.T) {
	var b strings.Builder
	err := showFaults(&b)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("FUSE cannot mount here without root (no fusermount): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != exampleOutput {
		t.Errorf("Example printed:\n%s\nwant:\n%s", b.String(), exampleOutput)
	}
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
