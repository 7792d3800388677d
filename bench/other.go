//go:build !linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// run parses the flags (so -h works) and reports that measuring needs Linux:
// the probes and the load rely on per-thread nice and I/O priority, O_DIRECT,
// CLOCK_THREAD_CPUTIME_ID and autogroup.
func run(_ context.Context, args []string, _, stderr io.Writer) error {
	if _, err := parseConfig(args, stderr); err != nil {
		return err
	}
	return errUnsupported
}

// workerMain exists so main compiles; no worker is ever started here.
func workerMain(mode string, _ []string) int {
	fmt.Fprintf(os.Stderr, "bench worker %s: %v\n", mode, errUnsupported)
	return 2
}
