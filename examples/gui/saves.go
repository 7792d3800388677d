package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// File names under the state folder. The sync saver writes the same files in
// the same format, so the two modes read each other's state.
const (
	draftsFile  = "drafts.json"
	anchorsFile = "anchors.json"
)

// saver is where the model sends every keystroke's draft and every settled
// scroll, on the UI goroutine. It also answers what the last run left.
type saver interface {
	// setDraft records chat's composer text; "" deletes the draft.
	setDraft(chat, text string) error
	// setAnchor records chat's scroll place.
	setAnchor(chat string, a anchors.Anchor) error
	// forgetAnchor drops chat's scroll place: the view is at the end.
	forgetAnchor(chat string) error
	draft(chat string) string
	anchor(chat string) (anchors.Anchor, bool)
	// register adds what must reach the disk at quit to h.
	register(h *flush.Hook)
	// close stops the saver's timers and waits for its files under ctx.
	close(ctx context.Context) error
	name() string
}

// offmainSaver saves through drafts.Store and anchors.Store: Set changes
// memory and returns; statefile encodes and writes on its own goroutine.
type offmainSaver struct {
	drafts  *drafts.Store
	anchors *anchors.Store
}

// openTimeout bounds the wait for the last run's state at startup, so that an
// app on a disk that does not answer starts anyway, or says why it cannot.
const openTimeout = 5 * time.Second

// openOffmain opens the drafts and anchors files in st and reads them. notes
// gets what the read met that the person should know (a corrupt file kept
// aside).
func openOffmain(st *statefile.Store, dir string, notes *[]string) (*offmainSaver, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	ds, err := drafts.OpenContext(ctx, st, filepath.Join(dir, draftsFile), drafts.Options{})
	if ds == nil {
		return nil, err
	}
	if err != nil {
		*notes = append(*notes, err.Error())
	}
	as, err := anchors.Open(st, filepath.Join(dir, anchorsFile), anchors.Options{})
	if err != nil {
		return nil, errors.Join(err, ds.Close(ctx))
	}
	if err := as.Load(ctx); err != nil {
		*notes = append(*notes, err.Error())
	}
	return &offmainSaver{drafts: ds, anchors: as}, nil
}

func (s *offmainSaver) setDraft(chat, text string) error {
	s.drafts.Set(chat, text)
	return nil
}

func (s *offmainSaver) setAnchor(chat string, a anchors.Anchor) error {
	s.anchors.Set(chat, a)
	return nil
}

func (s *offmainSaver) forgetAnchor(chat string) error {
	s.anchors.Forget(chat)
	return nil
}

func (s *offmainSaver) draft(chat string) string {
	d, _ := s.drafts.Get(chat)
	return d.Text
}

func (s *offmainSaver) anchor(chat string) (anchors.Anchor, bool) { return s.anchors.Get(chat) }

func (s *offmainSaver) register(h *flush.Hook) {
	h.Add("drafts", s.drafts)
	h.Add("anchors", s.anchors)
}

func (s *offmainSaver) close(ctx context.Context) error {
	return errors.Join(s.drafts.Close(ctx), s.anchors.Close(ctx))
}

func (s *offmainSaver) name() string { return "offmain saves" }

// describeErr shortens an error for the one-line status.
func describeErr(what string, err error) string {
	return fmt.Sprintf("%s: %v", what, err)
}
