package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain makes the test binary a bench worker when the bench re-executes
// it (os.Executable is the test binary), as os/exec's tests re-run theirs;
// otherwise it runs the tests and checks that no goroutine outlives them.
func TestMain(m *testing.M) {
	if mode := os.Getenv(workerEnv); mode != "" {
		os.Exit(workerMain(mode, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
