package chatstate

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// offmainSaver saves through drafts.Store and anchors.Store: Set changes
// memory and returns; statefile encodes and writes on its own goroutine.
type offmainSaver struct {
	drafts  *drafts.Store
	anchors *anchors.Store
}

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

func (s *offmainSaver) SetDraft(chat, text string) error {
	s.drafts.Set(chat, text)
	return nil
}

func (s *offmainSaver) SetAnchor(chat string, a anchors.Anchor) error {
	s.anchors.Set(chat, a)
	return nil
}

func (s *offmainSaver) ForgetAnchor(chat string) error {
	s.anchors.Forget(chat)
	return nil
}

func (s *offmainSaver) Draft(chat string) string {
	d, _ := s.drafts.Get(chat)
	return d.Text
}

func (s *offmainSaver) Anchor(chat string) (anchors.Anchor, bool) { return s.anchors.Get(chat) }

func (s *offmainSaver) register(h *flush.Hook) {
	h.Add("drafts", s.drafts)
	h.Add("anchors", s.anchors)
}

func (s *offmainSaver) close(ctx context.Context) error {
	return errors.Join(s.drafts.Close(ctx), s.anchors.Close(ctx))
}

func (s *offmainSaver) Name() string { return "offmain saves" }
