package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is the bar on stderr; a nil *progress draws nothing.
type progress struct {
	bar *progressbar.ProgressBar
}

// newProgress returns a bar of max steps on w, or nil when quiet is set or w
// is not a terminal (silent with -quiet or when stderr is not a
// terminal). A bar of known length starts no goroutine (progressbar v3.19.1
// only ticks a spinner for unknown lengths).
func newProgress(w io.Writer, max int, quiet bool) *progress {
	f, ok := w.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{bar: progressbar.NewOptions(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)}
}

// describe says what runs now.
func (p *progress) describe(desc string) {
	if p != nil {
		p.bar.Describe(desc)
	}
}

// add advances the bar by n steps.
func (p *progress) add(n int) {
	if p != nil {
		_ = p.bar.Add(n) // drawing errors on a terminal are not worth aborting a run
	}
}

// finish clears the bar.
func (p *progress) finish() {
	if p == nil {
		return
	}
	_ = p.bar.Finish()
}
