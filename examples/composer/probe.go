package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// The typing probe records, for each key, when it passed each hop on its way
// to the screen. Turned on by OFFMAIN_TYPING_PROBE=<file.csv>, it appends one
// CSV row per key:
//
//	seq,key,read_ns,update_ns,save_ns,view_ns,frame_ns
//
// as Unix nanoseconds (the wall clock, so that a driver in another process can
// line them up with its own): the terminal read that brought the key in,
// Update entered, the draft save returned (drafts.Store.Set, or the
// temp-file-and-rename write with -sync-saves), View returned, and the write of
// the next frame to the terminal returned. An empty cell is a hop the key did
// not pass (a key that saves nothing).
//
// Attribution rules, and their limits:
//   - A key's read is the oldest terminal read not yet given to an input
//     event; keys parsed from one read share it. bubbletea's reader hands
//     over every event of a read before it reads again, so this holds while
//     each read brings a key or a mouse event. A read that brings neither
//     (a terminal reply, an unknown sequence, half a sequence) stays queued,
//     and every later key is then credited with the read before its own.
//     Keys typed one per send-keys, as typebench does, bring no such read.
//   - A key's frame is the first write to the terminal that starts after its
//     View returned. bubbletea's renderer writes the latest View on its own
//     ticker (60 per second), so this hop includes waiting for that tick.
//     A frame write whose bytes were taken just before View returned (a window
//     of microseconds per tick) would be credited to the key too early.
//
// With the variable unset every hop costs one atomic load (see
// BenchmarkProbeOff).

// hop indexes a row's timestamps.
type hop int

const (
	hopRead hop = iota
	hopUpdate
	hopSave
	hopView
	hopFrame
	nHops
)

// probeHeader is the CSV header; typebench reads files with it.
var probeHeader = []string{"seq", "key", "read_ns", "update_ns", "save_ns", "view_ns", "frame_ns"}

// probeRef is the probe's switch: nil means off. One is shared by the model
// and the terminal wrappers; every hop method is one atomic load when off.
type probeRef struct {
	p atomic.Pointer[probe]
}

// keyRead marks a terminal read that returned bytes.
func (r *probeRef) keyRead() {
	if p := r.p.Load(); p != nil {
		p.mark(hopRead, nil)
	}
}

// updateEntered opens a row for a key as Update starts on it.
func (r *probeRef) updateEntered(k tea.KeyMsg) {
	if p := r.p.Load(); p != nil {
		p.mark(hopUpdate, &k)
	}
}

// inputEvent gives a terminal read to an input event that is not a key (a
// mouse event), so that a later key is not credited with it.
func (r *probeRef) inputEvent() {
	if p := r.p.Load(); p != nil {
		p.mark(inputEvent, nil)
	}
}

// saveReturned marks the draft save's return for the open row.
func (r *probeRef) saveReturned() {
	if p := r.p.Load(); p != nil {
		p.mark(hopSave, nil)
	}
}

// viewRendered marks the end of View for the open row.
func (r *probeRef) viewRendered() {
	if p := r.p.Load(); p != nil {
		p.mark(hopView, nil)
	}
}

// frameWriteStart returns the time a terminal write starts, or 0 when off.
func (r *probeRef) frameWriteStart() int64 {
	if p := r.p.Load(); p != nil {
		return p.startFrame()
	}
	return 0
}

// frameWritten marks a terminal write that started at start and has returned.
func (r *probeRef) frameWritten(start int64) {
	if p := r.p.Load(); p != nil && start != 0 {
		p.endFrame(start)
	}
}

// inputEvent is a mark that is not a row's hop.
const inputEvent hop = -1

// mark reads the clock and records h. It is the probe-on path of every
// method above, kept out of line so that each of them stays small enough
// to be inlined: an off probe then costs its caller one atomic load and a
// branch.
//
//go:noinline
func (p *probe) mark(h hop, k *tea.KeyMsg) {
	t := time.Now().UnixNano()
	switch h {
	case hopRead:
		p.read(t)
	case hopUpdate:
		p.update(k.String(), t)
	case inputEvent:
		p.input()
	case hopSave:
		p.saved(t)
	case hopView:
		p.view(t)
	}
}

// startFrame and endFrame are mark for a terminal write, with fewer
// arguments to keep their callers inlinable.
//
//go:noinline
func (p *probe) startFrame() int64 { return time.Now().UnixNano() }

//go:noinline
func (p *probe) endFrame(start int64) { p.frame(start, time.Now().UnixNano()) }

// row is one key's timestamps, 0 where a hop was not reached.
type row struct {
	seq int
	key string
	t   [nHops]int64
}

// maxReads bounds the reads kept that no input event took (see above).
const maxReads = 64

// probe is a running typing probe. Its methods are safe for concurrent use:
// reads come from bubbletea's input goroutine, Update and View from its event
// loop, frames from its renderer.
type probe struct {
	mu       sync.Mutex // protects the fields up to rows
	reads    []int64    // terminal reads not yet given to an input event, oldest first
	lastRead int64      // the read given to the last key, shared by keys from one read
	cur      *row       // the key between Update entered and View returned
	waiting  []*row     // keys rendered, waiting for their frame
	seq      int

	rows    chan row      // to the CSV writer; closed by close
	sink    func(row)     // tests: called for every finished row, on the writer goroutine
	done    chan struct{} // closed when the writer has ended
	dropped atomic.Int64  // rows lost because the writer fell behind
	err     error         // the writer's first error; read after done
}

// openProbe creates (truncating) the CSV file at path, writes the header and
// starts the probe's writer goroutine, which ends at close.
func openProbe(path string) (*probe, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("typing probe: %w", err)
	}
	return startProbe(f, nil), nil
}

// startProbe starts a probe writing CSV to w (closed at the end if it is an
// io.Closer) and handing each row to sink, if not nil.
func startProbe(w io.Writer, sink func(row)) *probe {
	p := &probe{rows: make(chan row, 1024), sink: sink, done: make(chan struct{})}
	go p.write(w)
	return p
}

// write is the writer goroutine: rows are written off the UI's goroutines so
// that a slow disk never delays the next key.
func (p *probe) write(w io.Writer) {
	defer close(p.done)
	cw := csv.NewWriter(w)
	keep := func(err error) {
		if p.err == nil {
			p.err = err
		}
	}
	keep(cw.Write(probeHeader))
	cw.Flush()
	keep(cw.Error())
	for r := range p.rows {
		rec := []string{strconv.Itoa(r.seq), r.key}
		for _, t := range r.t {
			s := ""
			if t != 0 {
				s = strconv.FormatInt(t, 10)
			}
			rec = append(rec, s)
		}
		keep(cw.Write(rec))
		cw.Flush()
		keep(cw.Error())
		if p.sink != nil {
			p.sink(r)
		}
	}
	if c, ok := w.(io.Closer); ok {
		keep(c.Close())
	}
}

// close writes the rows still waiting for a frame as they are, ends the
// writer and returns its first error.
func (p *probe) close() error {
	p.mu.Lock()
	if p.cur != nil {
		p.waiting = append(p.waiting, p.cur)
		p.cur = nil
	}
	for _, r := range p.waiting {
		p.emit(r)
	}
	p.waiting = nil
	close(p.rows)
	p.mu.Unlock()
	<-p.done
	if n := p.dropped.Load(); n > 0 && p.err == nil {
		return fmt.Errorf("typing probe: %d rows dropped: the writer fell behind", n)
	}
	return p.err
}

func (p *probe) read(t int64) {
	p.mu.Lock()
	if len(p.reads) == maxReads {
		p.reads = p.reads[1:]
	}
	p.reads = append(p.reads, t)
	p.mu.Unlock()
}

// takeRead returns the read of the next input event. p.mu is held.
func (p *probe) takeRead() int64 {
	if len(p.reads) > 0 {
		p.lastRead, p.reads = p.reads[0], p.reads[1:]
	}
	return p.lastRead
}

func (p *probe) input() {
	p.mu.Lock()
	p.takeRead()
	p.mu.Unlock()
}

func (p *probe) update(key string, t int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil { // a key whose View never came: keep what it has
		p.waiting = append(p.waiting, p.cur)
	}
	p.seq++
	r := &row{seq: p.seq, key: key}
	r.t[hopRead] = p.takeRead()
	r.t[hopUpdate] = t
	p.cur = r
}

func (p *probe) saved(t int64) {
	p.mu.Lock()
	if p.cur != nil {
		p.cur.t[hopSave] = t
	}
	p.mu.Unlock()
}

func (p *probe) view(t int64) {
	p.mu.Lock()
	if p.cur != nil {
		p.cur.t[hopView] = t
		p.waiting = append(p.waiting, p.cur)
		p.cur = nil
	}
	p.mu.Unlock()
}

// frame credits a write that ran from start to end to every key whose View
// returned before the write started.
func (p *probe) frame(start, end int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.waiting[:0]
	for _, r := range p.waiting {
		if r.t[hopView] != 0 && r.t[hopView] <= start {
			r.t[hopFrame] = end
			p.emit(r)
			continue
		}
		kept = append(kept, r)
	}
	clear(p.waiting[len(kept):])
	p.waiting = kept
}

// emit hands a finished row to the writer without ever blocking the caller
// (a UI goroutine). p.mu is held.
func (p *probe) emit(r *row) {
	select {
	case p.rows <- *r:
	default:
		p.dropped.Add(1)
	}
}
