package main

import (
	"io"
	"os"
)

// The terminal wrappers give the typing probe its first and last hop: when a
// read from the terminal returned, and when a frame's write to it returned.
// Over an *os.File they keep its Fd and Name, so bubbletea still sees a
// terminal (raw mode, window size, a cancelable epoll reader on Linux).

// probeInput wraps the app's input.
func probeInput(r io.Reader, p *probeRef) io.Reader {
	if f, ok := r.(*os.File); ok {
		return &ttyIn{plainIn{f, p}, f}
	}
	return &plainIn{r, p}
}

// probeOutput wraps the app's output.
func probeOutput(w io.Writer, p *probeRef) io.Writer {
	if f, ok := w.(*os.File); ok {
		return &ttyOut{plainOut{f, p}, f}
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
	f *os.File
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
	f *os.File
}

func (out *ttyOut) Read(b []byte) (int, error) { return out.f.Read(b) }
func (out *ttyOut) Close() error               { return out.f.Close() }
func (out *ttyOut) Fd() uintptr                { return out.f.Fd() }
func (out *ttyOut) Name() string               { return out.f.Name() }
