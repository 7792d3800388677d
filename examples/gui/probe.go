package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// probe is the typing probe (OFFMAIN_TYPING_PROBE=<file.csv>): for every
// change of a composer's text it keeps when the change passed each hop on
// the UI goroutine, and writes them as CSV at quit, so that recording never
// writes a file on the UI goroutine while typing is measured. Its methods
// are called on the UI goroutine only; a nil *probe records nothing.
type probe struct {
	path    string
	rows    []probeRow
	pending int // rows[pending:] wait for their frame
	frames  []probeFrame
}

// probeFrame is one frame, in Unix nanoseconds: from the w.Event return
// that delivered its FrameEvent to FrameEvent.Frame's return, and how many
// text changes it showed. It is written to the probe's file name with
// "-frames" before ".csv", so a reader can tell frames that showed a key
// from frames drawn for something else (an agent's output) that a key may
// have had to wait behind.
type probeFrame struct {
	start, end int64
	changes    int
}

// probeRow is one change, in Unix nanoseconds:
//   - event: w.Event returned the event whose frame saw the change (Gio
//     reads the X event on its own loop and then delivers a FrameEvent; this
//     is the first moment the app's code can see the key);
//   - handler: the editor's ChangeEvent was taken, before the save;
//   - save: the draft save returned (drafts.Store.Set, or the synchronous
//     write with -sync-saves);
//   - frame: FrameEvent.Frame returned for the frame that shows the change:
//     on X11 Gio renders and calls eglSwapBuffers inside it (see README).
type probeRow struct {
	chat                        string
	length                      int // the text's length in bytes after the change
	event, handler, save, frame int64
}

// maxProbeRows bounds the probe's memory in a long session.
const maxProbeRows = 1 << 20

// changed records a change seen in the frame that began at event.
func (p *probe) changed(chat string, length int, event, handler, save time.Time) {
	if p == nil || len(p.rows) >= maxProbeRows {
		return
	}
	p.rows = append(p.rows, probeRow{chat: chat, length: length,
		event: event.UnixNano(), handler: handler.UnixNano(), save: save.UnixNano()})
}

// framed stamps the changes waiting for a frame with the frame's return,
// and records the frame, which began at start.
func (p *probe) framed(start, at time.Time) {
	if p == nil {
		return
	}
	for i := p.pending; i < len(p.rows); i++ {
		p.rows[i].frame = at.UnixNano()
	}
	if len(p.frames) < maxProbeRows {
		p.frames = append(p.frames, probeFrame{start: start.UnixNano(), end: at.UnixNano(), changes: len(p.rows) - p.pending})
	}
	p.pending = len(p.rows)
}

// write writes the rows to the probe's file and the frames beside it.
func (p *probe) write() error {
	if p == nil {
		return nil
	}
	err := writeCSV(p.path, "seq,chat,len,event_ns,handler_ns,save_ns,frame_ns", len(p.rows), func(w io.Writer, i int) {
		r := p.rows[i]
		fmt.Fprintf(w, "%d,%s,%d,%d,%d,%d,%d\n", i, r.chat, r.length, r.event, r.handler, r.save, r.frame)
	})
	if err != nil {
		return err
	}
	return writeCSV(framesPath(p.path), "start_ns,end_ns,changes", len(p.frames), func(w io.Writer, i int) {
		f := p.frames[i]
		fmt.Fprintf(w, "%d,%d,%d\n", f.start, f.end, f.changes)
	})
}

// framesPath is where the probe at path writes its frames.
func framesPath(path string) string {
	return strings.TrimSuffix(path, ".csv") + "-frames.csv"
}

// writeCSV writes a header and n rows to path.
func writeCSV(path, header string, n int, row func(w io.Writer, i int)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, header)
	for i := range n {
		row(w, i)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
