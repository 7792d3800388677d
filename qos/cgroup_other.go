//go:build !linux

package qos

import (
	"errors"
	"fmt"
)

// JoinLeaf moves the calling process into a cgroup v2 leaf (see the Linux
// documentation); cgroups exist on Linux only, and elsewhere it returns an
// error wrapping [errors.ErrUnsupported].
func JoinLeaf(dir, name string) error {
	return fmt.Errorf("qos: cgroups are Linux only: %w", errors.ErrUnsupported)
}
