package main

import (
	"bufio"
	"fmt"
	"os"
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

// framed stamps the changes waiting for a frame with the frame's return.
func (p *probe) framed(at time.Time) {
	if p == nil {
		return
	}
	for i := p.pending; i < len(p.rows); i++ {
		p.rows[i].frame = at.UnixNano()
	}
	p.pending = len(p.rows)
}

// write writes the rows to the probe's file.
func (p *probe) write() error {
	if p == nil {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "seq,chat,len,event_ns,handler_ns,save_ns,frame_ns")
	for i, r := range p.rows {
		fmt.Fprintf(w, "%d,%s,%d,%d,%d,%d,%d\n", i, r.chat, r.length, r.event, r.handler, r.save, r.frame)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
