package chatstate

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/offmain/offmain/statefile"
)

// MaxItems is how many items a chat's transcript keeps; older ones go first.
const MaxItems = 1000

// Item is one entry of a transcript: a message sent, a line of an agent's
// output, a note from the app. Its ID names it in scroll places.
type Item struct {
	ID   string    `json:"id"`
	From string    `json:"from"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// Transcript is one chat's transcript file.
type Transcript struct {
	Version int    `json:"version"`
	Next    int    `json:"next"` // the number of the next item's ID
	Items   []Item `json:"items"`
}

// Transcripts keeps each chat's transcript in its own file through
// statefile, in both save modes: -sync-saves changes drafts and scroll
// places only. Save never waits on the disk.
type Transcripts struct {
	files  map[string]*statefile.File[Transcript]
	loaded map[string]Transcript // what the last run left, read at open
}

// openTranscripts opens and reads the transcript of each chat under
// dir/transcripts. A transcript that does not parse is kept aside by
// statefile and noted; the chat starts empty.
func openTranscripts(st *statefile.Store, dir string, chats []string, notes *[]string) (*Transcripts, error) {
	t := &Transcripts{files: map[string]*statefile.File[Transcript]{}, loaded: map[string]Transcript{}}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	for _, c := range chats {
		f, err := statefile.Open[Transcript](st, filepath.Join(dir, "transcripts", c+".json"))
		if err != nil {
			return nil, err
		}
		t.files[c] = f
		d, err := f.Load(ctx)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
		case errors.Is(err, statefile.ErrCorrupt):
			*notes = append(*notes, err.Error())
		default:
			return nil, err
		}
		t.loaded[c] = d
	}
	return t, nil
}

// Loaded returns chat's transcript as the last run left it.
func (t *Transcripts) Loaded(chat string) Transcript { return t.loaded[chat] }

// Save queues chat's transcript. The items are cloned: statefile encodes
// later, on its writer, while the UI keeps appending.
func (t *Transcripts) Save(chat string, next int, items []Item) error {
	f, ok := t.files[chat]
	if !ok {
		return nil
	}
	return f.Save(Transcript{Version: 1, Next: next, Items: slices.Clone(items)})
}
