package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/renameio/v2"
	"github.com/offmain/offmain/statefile"
)

// draft is a drafts-like value, about 64 KiB as JSON: what a person typed.
type draft struct {
	Seq    int    `json:"seq"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	Cursor int    `json:"cursor"`
}

// draftBody is 64 KiB of plain text, a long draft.
var draftBody = strings.Repeat("the quick brown fox jumps over the lazy dog. ", 64<<10/45+1)[:64<<10]

func newDraft(seq int) draft {
	return draft{Seq: seq, Title: "notes", Body: draftBody, Cursor: seq % len(draftBody)}
}

// saver holds the two ways an app saves: renameio on the caller (what apps
// do today) and statefile (an enqueue; encoding and I/O on a writer).
type saver struct {
	dir   string
	store *statefile.Store
	probe *statefile.File[draft] // the save-statefile probe's file
	ui    *statefile.File[draft] // the ui loop's statefile file
	mu    sync.Mutex             // protects errs and durable
	errs  []error                // disk and encode errors statefile reported on its writers
	// durable holds, for each write of the probe's file, the time from the
	// oldest Save it carried to its directory fsync (Options.Trace).
	durable []float64
}

func newSaver(dir string) (*saver, error) {
	s := &saver{dir: dir}
	s.store = statefile.NewStore(statefile.Options{OnError: s.onError, Trace: s.onTrace}) // zero Durability: Durable
	var err error
	if s.probe, err = statefile.Open[draft](s.store, filepath.Join(dir, "save statefile.json")); err != nil {
		return s, err
	}
	s.ui, err = statefile.Open[draft](s.store, filepath.Join(dir, uiFiles[uiStatefile]))
	return s, err
}

func (s *saver) onError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// onTrace keeps the probe file's time until durable: the wait in the queue
// (from the oldest Save the write carries) plus every step on the writer.
func (s *saver) onTrace(tr statefile.SaveTrace) {
	if tr.Path != s.probe.Path() || tr.Remove || tr.Err != nil {
		return
	}
	d := tr.Queued + tr.Encode + tr.Write + tr.Sync + tr.Rename + tr.DirSync
	s.mu.Lock()
	defer s.mu.Unlock()
	s.durable = append(s.durable, ms(d))
}

// takeDurable returns the window's durable times and how many writes ran
// (each Save call not among them was superseded by a later one).
func (s *saver) takeDurable() map[string][]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.durable
	s.durable = nil
	return map[string][]float64{"save-statefile.durable": d, "save-statefile.written": {float64(len(d))}}
}

// saveSync encodes and writes the draft on the caller, as an app's main
// goroutine would: renameio's temp file, fsync and rename.
func (s *saver) saveSync(name string) func(seq int) error {
	path := filepath.Join(s.dir, name)
	return func(seq int) error {
		b, err := json.Marshal(newDraft(seq))
		if err != nil {
			return err
		}
		return renameio.WriteFile(path, b, 0o600)
	}
}

// saveStatefile hands the draft to f's writer; the caller's time is the enqueue.
func saveStatefile(f *statefile.File[draft]) func(seq int) error {
	return func(seq int) error { return f.Save(newDraft(seq)) }
}

// flush waits for the queued statefile saves, so one arm's writes do not
// spill into the next, and reports any disk error the writers met.
func (s *saver) flush(ctx context.Context) error {
	err := s.store.Flush(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	err = errors.Join(err, errors.Join(s.errs...))
	s.errs = nil
	if err != nil {
		return fmt.Errorf("save-statefile probe: %w", err)
	}
	return nil
}

func (s *saver) close(ctx context.Context) error {
	if err := s.store.Close(ctx); err != nil {
		return fmt.Errorf("statefile close: %w", err)
	}
	return nil
}
