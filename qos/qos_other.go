//go:build !linux && !darwin && !windows

package qos

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

// On other platforms nothing is applied. By default Start and Do go ahead
// unchanged, so a portable caller needs no special case; with Options.Strict
// they refuse, starting and running nothing, so a caller that must not run
// agents at full priority can tell.

func (o Options) unsupported(what string) error {
	if !o.Strict {
		return nil
	}
	return fmt.Errorf("qos: %s on %s: %w", what, runtime.GOOS, errors.ErrUnsupported)
}

func (o Options) start(cmd *exec.Cmd, t Tier, m Mode) error {
	if m != ModeOff {
		if err := o.unsupported("Start"); err != nil {
			return err
		}
	}
	return cmd.Start()
}

func (o Options) do(t Tier, m Mode, fn func()) error {
	if m != ModeOff {
		if err := o.unsupported("Do"); err != nil {
			return err
		}
	}
	fn()
	return nil
}

func (o Options) enterServing() error { return o.unsupported("EnterServing") }

func inspect(pid int) (Applied, error) {
	return Applied{}, fmt.Errorf("qos: Inspect on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
