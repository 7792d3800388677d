package main

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// The terminal wrappers give the typing probe its first and last hop: when a
// read from the terminal returned, and when a frame's write to it returned.
// Over an *os.File they keep its Fd and Name, so bubbletea still sees a
// terminal (raw mode, window size, a cancelable epoll reader on Linux).
//
// They also notice the terminal going away (its window closed, its tmux
// server or ssh connection killed). A hung-up terminal returns end-of-file
// to every read and fails every write with EIO, and SIGHUP goes only to its
// controlling process (POSIX.1-2017, XBD 11.1.10 "Modem Disconnect"; Linux:
// hung_up_tty_read and hung_up_tty_write in drivers/tty/tty_io.c, which a
// pty's slave gets once its master closes). bubbletea v1.3.10 ends its input
// loop quietly at EOF (Program.readLoop in its tty.go) and drops write
// errors, so an app that got no SIGHUP ran on without a terminal. The
// wrappers end the program instead, and the app's quit path runs.

// hangup ends the program, once, when a read or write finds the terminal
// gone.
type hangup struct {
	once sync.Once
	end  func()      // ends the program without blocking (Program.Kill): it runs in bubbletea's reader or renderer
	gone atomic.Bool // set before end runs
}

func (h *hangup) found() {
	h.once.Do(func() {
		h.gone.Store(true)
		h.end()
	})
}

// probeInput wraps the app's input.
func probeInput(r io.Reader, p *probeRef, h *hangup) io.Reader {
	if f, ok := r.(*os.File); ok {
		return &ttyIn{plainIn{f, p}, f, h}
	}
	return &plainIn{r, p}
}

// probeOutput wraps the app's output.
func probeOutput(w io.Writer, p *probeRef, h *hangup) io.Writer {
	if f, ok := w.(*os.File); ok {
		return &ttyOut{plainOut{f, p}, f, h}
	}
	return &plainOut{w, p}
}

type plainIn struct {
	r     io.Reader
	probe *probeRef
}

func (in *plainIn) Read(b []byte) (int, error) {
	n, err := in.r.Read(b)
	if n > 0 {
		in.probe.keyRead()
	}
	return n, err
}

type ttyIn struct {
	plainIn
	f      *os.File
	hangup *hangup
}

// Read reads keys. A read that finds the terminal gone (EOF in raw mode, or
// EIO) ends the program and returns io.EOF, which ends bubbletea's input
// loop without an error of its own.
func (in *ttyIn) Read(b []byte) (int, error) {
	n, err := in.plainIn.Read(b)
	if n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO)) {
		in.hangup.found()
		return 0, io.EOF
	}
	return n, err
}

func (in *ttyIn) Write(b []byte) (int, error) { return in.f.Write(b) }
func (in *ttyIn) Close() error                { return in.f.Close() }
func (in *ttyIn) Fd() uintptr                 { return in.f.Fd() }
func (in *ttyIn) Name() string                { return in.f.Name() }

type plainOut struct {
	w     io.Writer
	probe *probeRef
}

func (out *plainOut) Write(b []byte) (int, error) {
	start := out.probe.frameWriteStart()
	n, err := out.w.Write(b)
	out.probe.frameWritten(start)
	return n, err
}

type ttyOut struct {
	plainOut
	f      *os.File
	hangup *hangup
}

// Write writes a frame; EIO means the terminal is gone.
func (out *ttyOut) Write(b []byte) (int, error) {
	n, err := out.plainOut.Write(b)
	if errors.Is(err, syscall.EIO) {
		out.hangup.found()
	}
	return n, err
}

func (out *ttyOut) Read(b []byte) (int, error) { return out.f.Read(b) }
func (out *ttyOut) Close() error               { return out.f.Close() }
func (out *ttyOut) Fd() uintptr                { return out.f.Fd() }
func (out *ttyOut) Name() string               { return out.f.Name() }
