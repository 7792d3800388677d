//go:build !unix

package flush_test

import "syscall"

func agentAttr() *syscall.SysProcAttr { return nil }
