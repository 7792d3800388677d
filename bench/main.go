// Command bench measures, on the machine it runs on, what statefile and qos
// buy a desktop app whose agents load the machine.
//
// It runs probes that stand in for the GUI (a 120 Hz frame loop, CPU bursts,
// uncached reads, fsyncs, synchronous and statefile saves, a UI loop that
// saves, watched by the stall package half the time) at default priority, while agent-like load (CPU spinners, writers,
// metadata storms, uncached readers) runs at the tier of each arm: idle (no
// load), default (nice 0, today without this module), agent and background
// (through qos.Start), and setsid (every worker in its own session, without and
// with the autogroup fix). Arms run in a shuffled order within each round.
// It prints a Markdown table, one row per metric and one column per arm,
// with n, the agents' own progress, and bootstrap intervals of each arm's
// change against default (and ratio to idle); -json and -svg write the
// figures and the distributions. bench/README.md says how to read them.
//
// Usage:
//
//	go run ./bench [-duration 8s] [-rounds 5] [-arms idle,default,...] [-quick]
//	               [-seed N] [-pace write=MB/s,read=MB/s,meta=files/s] [-gomaxprocs N]
//	               [-json FILE] [-svg FILE] [-quiet] [-dir DIR] [-spinners N]
//
// Measuring needs Linux; elsewhere the command says so and exits with status 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// The environment a worker process is started with. workerEnv's presence
// makes the binary a worker; runEnv carries the run's marker so a test (or a
// person) can find every process of one run in /proc/<pid>/environ.
const (
	workerEnv   = "OFFMAIN_BENCH_WORKER"   // worker mode: spin, write, meta or read
	runEnv      = "OFFMAIN_BENCH_RUN"      // the run's marker
	lowerEnv    = "OFFMAIN_BENCH_LOWER"    // how the worker lowers itself first thing (see lowerSpec)
	setsidEnv   = "OFFMAIN_BENCH_SETSID"   // "1": the worker calls setsid(2) first thing (the setsid arm)
	countersEnv = "OFFMAIN_BENCH_COUNTERS" // the file the worker counts its progress in (counters)
	paceEnv     = "OFFMAIN_BENCH_PACE"     // the worker's offered rate, units per second (pace)
	stallEnv    = "OFFMAIN_STALL"          // read by stall.Watch; the bench refuses to run with it set
)

// errUnsupported is returned by run on systems where the bench cannot measure.
var errUnsupported = errors.New("bench: measuring needs Linux (per-thread nice, I/O priority, O_DIRECT, autogroup); not supported here")

func main() {
	// A worker re-executes this binary with workerEnv set: it never parses the
	// bench's flags and never returns.
	if mode := os.Getenv(workerEnv); mode != "" {
		os.Exit(workerMain(mode, os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and maps it to the process's exit status:
// 0 for success and -h, 2 for usage errors and unsupported systems, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, err)
		return 2
	case errors.Is(err, errUnsupported):
		fmt.Fprintln(stderr, err)
		return 2
	default:
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
}
