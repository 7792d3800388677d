//go:build !linux && !darwin && !windows

package qos

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

// On other platforms nothing is applied: Start and Do go ahead unchanged,
// so a portable caller needs no special case, and Inspect says so.

func start(cmd *exec.Cmd, t Tier, m Mode) error { return cmd.Start() }

func do(t Tier, m Mode, fn func()) error {
	fn()
	return nil
}

func enterServing() error { return nil }

func inspect(pid int) (Applied, error) {
	return Applied{}, fmt.Errorf("qos: Inspect on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
