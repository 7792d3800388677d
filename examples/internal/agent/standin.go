package agent

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The stand-in's disk work: 1 MiB writes, an fsync every 8 MiB, the file
// starting over at 64 MiB so that a long run cannot fill the disk.
const (
	workerChunk = 1 << 20
	workerSync  = 8 << 20
	workerWrap  = 64 << 20
)

// StandIn runs the built-in stand-in agent: a stand-in for a coding agent
// and what it starts (compilers, git, rg), busy on every CPU and on the
// disk. The app's main calls it, instead of running the app, when the
// variable named by [Options.StandInEnv] is 1: that is how the default agent
// re-executes the app (and a test binary's TestMain honours it too).
//
// It runs until its stdin ends (the app closed it, quit or died) or SIGINT
// or SIGTERM arrives, then removes its scratch folder (under os.TempDir,
// named scratchPrefix and a random suffix) and returns the exit status. It
// prints one progress line a second, and "ack: <line>" for every line it
// reads.
func StandIn(scratchPrefix string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	scratch, err := os.MkdirTemp("", scratchPrefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		return 1
	}
	defer os.RemoveAll(scratch)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	out := &lockedWriter{w: os.Stdout}
	// The stdin goroutine ends at EOF, or with the process.
	go func() {
		echo(os.Stdin, out)
		cancel()
	}()

	var written, syncs atomic.Int64
	var wg sync.WaitGroup
	spinners := runtime.NumCPU()
	for range spinners {
		wg.Go(func() { spinUntil(ctx) })
	}
	var werr error
	wg.Go(func() { werr = writeUntil(ctx, filepath.Join(scratch, "load"), &written, &syncs) })

	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	out.printf("stand-in load started: %d spinners, 1 MiB writes with an fsync every 8 MiB\n", spinners)
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			if werr != nil {
				out.printf("disk load stopped: %v\n", werr)
			}
			return 0
		case <-tick.C:
			out.printf("up %ds, %d spinners, %d MiB written, %d fsyncs\n",
				int(time.Since(start).Seconds()), spinners, written.Load()>>20, syncs.Load())
		}
	}
}

// echo acknowledges every line read from r.
func echo(r io.Reader, out *lockedWriter) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out.printf("ack: %s\n", sc.Text())
	}
}

// spinUntil keeps one CPU busy until ctx ends.
func spinUntil(ctx context.Context) {
	x := rand.Uint64() | 1
	for ctx.Err() == nil {
		for range 1 << 16 {
			x ^= x << 13 // xorshift64 (Marsaglia 2003)
			x ^= x >> 7
			x ^= x << 17
		}
	}
	runtime.KeepAlive(x)
}

// writeUntil writes path in 1 MiB chunks with a periodic fsync until ctx ends.
func writeUntil(ctx context.Context, path string, written, syncs *atomic.Int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, workerChunk)
	for i := range buf {
		buf[i] = byte(rand.Uint32())
	}
	for n := 0; ctx.Err() == nil; {
		if _, err := f.Write(buf); err != nil {
			return err
		}
		n += workerChunk
		written.Add(workerChunk)
		if n%workerSync == 0 {
			if err := f.Sync(); err != nil {
				return err
			}
			syncs.Add(1)
		}
		if n >= workerWrap {
			if err := f.Truncate(0); err != nil {
				return err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			n = 0
		}
	}
	return nil
}

// lockedWriter serializes lines from several goroutines.
type lockedWriter struct {
	mu sync.Mutex // protects w
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}
