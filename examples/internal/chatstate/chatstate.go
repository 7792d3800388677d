// Package chatstate is the example apps' state on disk: each chat's draft
// and scroll place, saved through drafts.Store and anchors.Store or, with
// -sync-saves, the way apps do today (see [Options.SyncSaves]), and each
// chat's transcript, saved through statefile in both modes. A flush.Hook
// drains it all at quit.
package chatstate

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// File names under the state folder. The sync saver writes the same files in
// the same format, so the two modes read each other's state.
const (
	draftsFile  = "drafts.json"
	anchorsFile = "anchors.json"
)

// quitTimeout is the flush hook's deadline at quit (2 s).
const quitTimeout = 2 * time.Second

// openTimeout bounds the wait for the last run's state at startup, so that an
// app on a disk that does not answer starts anyway, or says why it cannot.
const openTimeout = 5 * time.Second

// Saver is where the UI sends every keystroke's draft and every settled
// scroll, on the UI's goroutine. It also answers what the last run left.
// It is not safe for concurrent use: the sync saver writes on the caller's
// goroutine.
type Saver interface {
	// SetDraft records chat's composer text; "" deletes the draft.
	SetDraft(chat, text string) error
	// SetAnchor records chat's scroll place.
	SetAnchor(chat string, a anchors.Anchor) error
	// ForgetAnchor drops chat's scroll place: the view is at the end.
	ForgetAnchor(chat string) error
	// Draft returns chat's draft text, "" if none.
	Draft(chat string) string
	// Anchor returns chat's scroll place, if it has one.
	Anchor(chat string) (anchors.Anchor, bool)
	// Name is the save mode, for the status line.
	Name() string
}

// saver is a Saver that the State registers with its hook and closes.
type saver interface {
	Saver
	// register adds what must reach the disk at quit to h.
	register(h *flush.Hook)
	// close stops the saver's timers and waits for its files under ctx.
	close(ctx context.Context) error
}

// Options configure [Open]. The zero value opens no transcripts and saves
// through drafts and anchors.
type Options struct {
	// Chats names the chats whose transcripts Open reads and Save writes.
	// Zero: none.
	Chats []string
	// SyncSaves saves drafts and scroll places as apps do today: each change
	// encoded and written on the caller's goroutine with a plain
	// temp-file-and-rename write. Zero: through drafts.Store and
	// anchors.Store, which change memory and return.
	SyncSaves bool
	// OnError is told of a write that failed, on a statefile writer
	// goroutine: it must not touch the UI. Zero: failed writes are dropped.
	OnError func(err error)
	// OnRecovered is told, on a goroutine of the state's, that a file whose
	// write failed has been written since (statefile retries it:
	// Options.OnRecovered), or that a drafts or anchors file that could not
	// be read when the state opened has been read and saving goes on: a
	// "not saved" note can go. It must not touch the UI. Zero: not told.
	OnRecovered func(path string)
}

// State is an app's state on disk. Its fields are set by [Open] and must not
// be replaced.
type State struct {
	// Saves takes the drafts and scroll places, in the mode Options chose.
	Saves Saver
	// Transcripts takes the transcripts of the chats Options named.
	Transcripts *Transcripts
	// Hook drains the saves and the transcripts, under a 2 s deadline: the
	// app adds its stoppers (its agents, its UI) and runs Exit at quit.
	Hook *flush.Hook
	// Notes is what the open met that the person should know (a corrupt
	// file kept aside), in the order met.
	Notes []string

	saver saver
	st    *statefile.Store
}

// Open opens the state under dir, creating the folder, and reads what the
// last run left.
func Open(dir string, opts Options) (*State, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &State{Hook: flush.New(flush.Options{Timeout: quitTimeout})}
	recovered := func(path string) {
		if opts.OnRecovered != nil {
			opts.OnRecovered(path)
		}
	}
	s.st = statefile.NewStore(statefile.Options{
		OnError: func(err error) {
			if opts.OnError != nil {
				opts.OnError(err)
			}
		},
		OnRecovered: recovered,
	})
	var err error
	if opts.SyncSaves {
		s.saver, err = openSync(dir, &s.Notes)
	} else {
		s.saver, err = openOffmain(s.st, dir, &s.Notes, recovered)
	}
	if err != nil {
		return nil, errors.Join(err, s.closeStore())
	}
	s.Transcripts, err = openTranscripts(s.st, dir, opts.Chats, &s.Notes)
	if err != nil {
		return nil, errors.Join(err, s.saver.close(context.Background()), s.closeStore())
	}
	s.Saves = s.saver
	s.saver.register(s.Hook)
	s.Hook.Add("transcripts", s.st)
	return s, nil
}

// Close closes the stores, once the app's Hook.Exit has drained them: it
// only stops their timers and writers, with little time left to wait.
func (s *State) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = s.saver.close(ctx)
	_ = s.st.Close(ctx)
}

// closeStore closes the statefile store after a failed open.
func (s *State) closeStore() error {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return s.st.Close(ctx)
}
