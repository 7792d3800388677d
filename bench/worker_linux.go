package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Sizes of the writers' work: 1 MiB writes, an fsync every 32 MiB, and the
// file starts over at 256 MiB so a long run cannot fill the disk.
const (
	writeChunk = 1 << 20
	writeSync  = 32 << 20
	writeWrap  = 256 << 20
	readChunk  = 128 << 10 // the uncached readers' request size
)

// workerMain runs one hidden worker mode and returns the exit status.
// The modes run until the bench kills them, so runWorker returns only on
// an error.
func workerMain(mode string, args []string) int {
	fmt.Fprintf(os.Stderr, "bench worker %s: %v\n", mode, runWorker(mode, args))
	return 1
}

func runWorker(mode string, args []string) error {
	if os.Getenv(setsidEnv) == "1" {
		if _, err := unix.Setsid(); err != nil {
			return fmt.Errorf("setsid: %w", err)
		}
	}
	if v := os.Getenv(lowerEnv); v != "" {
		s, err := parseLowerSpec(v)
		if err != nil {
			return err
		}
		if err := lowerSelf(s); err != nil {
			return err
		}
	}
	// Stdin is the bench's lifeline pipe: EOF means the bench is gone (exited,
	// killed, crashed), and the worker must not outlive it. This goroutine
	// ends the process; it is the worker's only exit besides SIGKILL.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	if len(args) != 1 {
		return fmt.Errorf("want one argument, got %q", args)
	}
	c, p, err := workerProgress()
	if err != nil {
		return err
	}
	switch mode {
	case "spin":
		return spinForever(c)
	case "write":
		return writeForever(args[0], c, p)
	case "meta":
		return metaForever(args[0], c, p)
	case "read":
		return readForever(args[0], c, p)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// workerProgress opens the counters the bench made for this worker (a
// throwaway mapping when run without one, as the arms test does) and its
// pacer.
func workerProgress() (*counters, *pacer, error) {
	path := os.Getenv(countersEnv)
	if path == "" {
		f, err := os.CreateTemp("", "bench counters")
		if err != nil {
			return nil, nil, err
		}
		path = f.Name()
		f.Close()
		defer os.Remove(path)
		c, err := openCounters(path, true)
		return c, newPacer(0), err
	}
	c, err := openCounters(path, false)
	if err != nil {
		return nil, nil, err
	}
	rate, err := strconv.ParseFloat(os.Getenv(paceEnv), 64)
	if err != nil {
		rate = 0 // unset: a closed loop
	}
	return c, newPacer(rate), nil
}

// ready tells the bench, on the ready pipe, that the load is running.
func ready() error {
	_, err := os.Stdout.WriteString("ready\n")
	return err
}

// spinForever counts one operation per 2^20 rounds of spin.
func spinForever(c *counters) error {
	if err := ready(); err != nil {
		return err
	}
	x := uint64(0x9E3779B97F4A7C15)
	for {
		x = spin(x, 1<<20)
		sink.Store(x)
		c.add(1, 0)
	}
}

// writeForever writes large sequential chunks with a periodic fsync.
func writeForever(path string, c *counters, p *pacer) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	buf := make([]byte, writeChunk)
	for i := range buf {
		buf[i] = byte(rand.Uint32())
	}
	if err := ready(); err != nil {
		return err
	}
	for n := writeChunk; ; n += writeChunk {
		if _, err := f.Write(buf); err != nil {
			return err
		}
		c.add(1, writeChunk)
		p.did(writeChunk)
		if n%writeSync == 0 {
			if err := f.Sync(); err != nil {
				return err
			}
		}
		if n >= writeWrap {
			if err := f.Truncate(0); err != nil {
				return err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			n = 0
		}
	}
}

// metaForever walks the tree and stats every entry, over and over, as find,
// rg and git status do.
func metaForever(root string, c *counters, p *pacer) error {
	if err := ready(); err != nil {
		return err
	}
	for {
		err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			_, err = d.Info()
			c.add(1, 0)
			p.did(1)
			return err
		})
		if err != nil {
			return err
		}
	}
}

// readForever reads random chunks of path, bypassing the page cache.
func readForever(path string, c *counters, p *pacer) error {
	r, err := openUncached(path)
	if err != nil {
		return err
	}
	buf, err := alignedBuf(readChunk)
	if err != nil {
		return err
	}
	if err := ready(); err != nil {
		return err
	}
	chunks := r.size / readChunk
	if chunks < 1 {
		return fmt.Errorf("%s: smaller than one %d-byte chunk", path, readChunk)
	}
	for {
		if err := r.readAt(buf, rand.Int64N(chunks)*readChunk); err != nil {
			return err
		}
		c.add(1, readChunk)
		p.did(readChunk)
	}
}

// uncached reads a file bypassing the page cache: O_DIRECT where the
// filesystem supports it (open(2): EINVAL where it does not, e.g. tmpfs),
// else posix_fadvise(POSIX_FADV_DONTNEED) before each read.
type uncached struct {
	f      *os.File
	direct bool
	size   int64
}

func openUncached(path string) (*uncached, error) {
	direct := true
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if errors.Is(err, unix.EINVAL) {
		direct = false
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &uncached{f: f, direct: direct, size: st.Size()}, nil
}

// readAt fills buf from offset off; a short read is an error.
func (u *uncached) readAt(buf []byte, off int64) error {
	if !u.direct {
		if err := unix.Fadvise(int(u.f.Fd()), off, int64(len(buf)), unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("fadvise %s: %w", u.f.Name(), err)
		}
	}
	n, err := u.f.ReadAt(buf, off)
	if err == nil && n < len(buf) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (u *uncached) method() string {
	if u.direct {
		return "O_DIRECT"
	}
	return "posix_fadvise DONTNEED (O_DIRECT not supported here)"
}

// alignedBuf returns n bytes aligned to the page size, as O_DIRECT needs
// (open(2), "O_DIRECT": buffer and offset aligned to the logical block size),
// from an anonymous mapping, which is page-aligned.
func alignedBuf(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
}
