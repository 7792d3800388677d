package chatstate

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

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

	closed    chan struct{}  // closed by close: the waits for a late read end
	closeOnce sync.Once      // close may run more than once (Quit again)
	waiting   sync.WaitGroup // the waits for a late read
}

// openOffmain opens the drafts and anchors files in st and reads them. notes
// gets what the read met that the person should know (a corrupt file kept
// aside, a file that could not be read); recovered is told when a file that
// could not be read has been read after all (the stores retry it).
func openOffmain(st *statefile.Store, dir string, notes *[]string, recovered func(path string)) (*offmainSaver, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	s := &offmainSaver{closed: make(chan struct{})}
	var err error
	s.drafts, err = drafts.Open(st, filepath.Join(dir, draftsFile), drafts.Options{})
	if err != nil {
		return nil, err
	}
	if err := s.drafts.Load(ctx); err != nil {
		*notes = append(*notes, err.Error())
	}
	s.anchors, err = anchors.Open(st, filepath.Join(dir, anchorsFile), anchors.Options{})
	if err != nil {
		return nil, errors.Join(err, s.drafts.Close(ctx))
	}
	if err := s.anchors.Load(ctx); err != nil {
		*notes = append(*notes, err.Error())
	}
	s.tellWhenRead(s.drafts.Loaded(), filepath.Join(dir, draftsFile), recovered)
	s.tellWhenRead(s.anchors.Loaded(), filepath.Join(dir, anchorsFile), recovered)
	return s, nil
}

// tellWhenRead tells recovered once loaded closes, if it has not yet: the
// store's read failed and it retries (see drafts.Store.Loaded).
func (s *offmainSaver) tellWhenRead(loaded <-chan struct{}, path string, recovered func(string)) {
	select {
	case <-loaded:
		return
	default:
	}
	s.waiting.Go(func() {
		select {
		case <-loaded:
			recovered(path)
		case <-s.closed:
		}
	})
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
	s.closeOnce.Do(func() { close(s.closed) })
	s.waiting.Wait()
	return errors.Join(s.drafts.Close(ctx), s.anchors.Close(ctx))
}

func (s *offmainSaver) Name() string { return "offmain saves" }
