package drafts_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/statefile"
)

func Example() {
	dir, err := os.MkdirTemp("", "drafts-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "drafts.json")

	st := statefile.NewStore(statefile.Options{})
	d, err := drafts.Open(st, path, drafts.Options{})
	if err != nil {
		log.Fatal(err) // with a corrupt file, d is still usable: log and go on
	}

	// On every keystroke, from the GUI goroutine: no disk, no encoding.
	d.Set("chat-1", "Hello")
	d.Set("chat-1", "Hello, wor")
	d.Put("chat-2", drafts.Draft{Text: "see the log", Attachments: []string{"/tmp/build.log"}})
	d.Set("chat-3", "never mind")
	d.Set("chat-3", "") // empty text deletes the draft

	// At quit: queue what has not been saved yet and wait, under a deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		log.Print(err)
	}
	if err := st.Close(ctx); err != nil {
		log.Print(err)
	}

	// Next start: the drafts are back.
	st = statefile.NewStore(statefile.Options{})
	defer st.Close(context.Background())
	d, err = drafts.Open(st, path, drafts.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, tab := range d.Tabs() {
		dr, _ := d.Get(tab)
		fmt.Printf("%s: %q %v\n", tab, dr.Text, dr.Attachments)
	}
	d.Close(ctx)
	// Output:
	// chat-1: "Hello, wor" []
	// chat-2: "see the log" [/tmp/build.log]
}
