package chatstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
)

// syncSaver is -sync-saves ([Options.SyncSaves]): what apps do today. Every
// change is encoded and written on the caller's goroutine, the UI's, with a
// plain temp-file-and-rename write: write a temp file beside the target,
// fsync it, rename it over the target (as electron-store and Chromium's
// ImportantFileWriter do; neither fsyncs the folder, and neither does this).
// It writes the files drafts and anchors write, in their format
// ({"version":1,"drafts":{...}} and {"version":1,"anchors":[...]}, least
// recently set first), so either mode restores the other's state.
//
// It is only used from the UI's goroutine and is not safe for concurrent use.
type syncSaver struct {
	dir     string
	drafts  map[string]drafts.Draft
	anchors []anchorRecord // least recently set first
}

type draftsData struct {
	Version int                     `json:"version"`
	Drafts  map[string]drafts.Draft `json:"drafts"`
}

type anchorRecord struct {
	Chat string `json:"chat"`
	anchors.Anchor
}

type anchorsData struct {
	Version int            `json:"version"`
	Anchors []anchorRecord `json:"anchors"`
}

// openSync reads what the last run left. A file that does not parse is
// noted and ignored; the next save overwrites it, as electron-store does.
func openSync(dir string, notes *[]string) (*syncSaver, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &syncSaver{dir: dir, drafts: map[string]drafts.Draft{}}
	var d draftsData
	if err := readJSON(filepath.Join(dir, draftsFile), &d); err != nil {
		*notes = append(*notes, err.Error())
	} else if d.Drafts != nil {
		s.drafts = d.Drafts
	}
	var a anchorsData
	if err := readJSON(filepath.Join(dir, anchorsFile), &a); err != nil {
		*notes = append(*notes, err.Error())
	}
	s.anchors = a.Anchors
	return s, nil
}

// readJSON decodes path into v; a missing file is no error.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: starting empty: %w", path, err)
	}
	return nil
}

func (s *syncSaver) SetDraft(chat, text string) error {
	old, ok := s.drafts[chat]
	if old.Text == text && (ok || text == "") {
		return nil
	}
	path := filepath.Join(s.dir, draftsFile)
	if text == "" {
		delete(s.drafts, chat)
	} else {
		s.drafts[chat] = drafts.Draft{Text: text, Attachments: old.Attachments, UpdatedAt: time.Now()}
	}
	if len(s.drafts) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeSync(path, draftsData{Version: 1, Drafts: s.drafts})
}

// maxAnchors matches anchors.Options.Max's default.
const maxAnchors = 500

func (s *syncSaver) SetAnchor(chat string, a anchors.Anchor) error {
	if a.UpdatedAt.IsZero() {
		a.UpdatedAt = time.Now()
	}
	for i, r := range s.anchors {
		if r.Chat == chat {
			s.anchors = append(s.anchors[:i], s.anchors[i+1:]...)
			break
		}
	}
	s.anchors = append(s.anchors, anchorRecord{Chat: chat, Anchor: a})
	if len(s.anchors) > maxAnchors {
		s.anchors = s.anchors[len(s.anchors)-maxAnchors:]
	}
	return writeSync(filepath.Join(s.dir, anchorsFile), anchorsData{Version: 1, Anchors: s.anchors})
}

func (s *syncSaver) ForgetAnchor(chat string) error {
	for i, r := range s.anchors {
		if r.Chat == chat {
			s.anchors = append(s.anchors[:i], s.anchors[i+1:]...)
			return writeSync(filepath.Join(s.dir, anchorsFile), anchorsData{Version: 1, Anchors: s.anchors})
		}
	}
	return nil
}

func (s *syncSaver) Draft(chat string) string { return s.drafts[chat].Text }

func (s *syncSaver) Anchor(chat string) (anchors.Anchor, bool) {
	for _, r := range s.anchors {
		if r.Chat == chat {
			return r.Anchor, true
		}
	}
	return anchors.Anchor{}, false
}

// register adds nothing: every change is on disk before SetDraft returns.
func (s *syncSaver) register(*flush.Hook) {}

func (s *syncSaver) close(context.Context) error { return nil }

func (s *syncSaver) Name() string { return "sync saves" }

// writeSync is the plain temp-file-and-rename write.
func writeSync(path string, v any) (err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".sync-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
