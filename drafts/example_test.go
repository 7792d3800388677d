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

	// Zero Options: a save that fails is logged to slog.Default when it
	// happens.
	st := statefile.NewStore(statefile.Options{})
	// Open never waits on the disk, so the GUI goroutine may call it; its
	// only errors are statefile.Open's (a closed Store).
	d, err := drafts.Open(st, path, drafts.Options{})
	if err != nil {
		log.Fatal(err)
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

	// Next start: the drafts are back once the read lands.
	st = statefile.NewStore(statefile.Options{})
	defer st.Close(context.Background())
	d, err = drafts.Open(st, path, drafts.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Off the GUI goroutine (a GUI waits on d.Loaded() and redraws): wait
	// for the read and log what it met. With a corrupt file (kept aside) or
	// an unreadable one (never overwritten: d then saves nothing), d still
	// works: log and go on.
	if err := d.Load(ctx); err != nil {
		log.Print(err)
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

// Two windows of one app, each with its own statefile.Store as two
// processes have, watch one drafts file: what one saves, the other merges
// and is told of.
func Example_watch() {
	dir, err := os.MkdirTemp("", "drafts-watch-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "drafts.json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	type window struct {
		st      *statefile.Store
		d       *drafts.Store
		changed chan []string
	}
	open := func() window {
		w := window{st: statefile.NewStore(statefile.Options{}), changed: make(chan []string, 1)}
		w.d, err = drafts.Open(w.st, path, drafts.Options{
			// On statefile's goroutine: a GUI app posts to its UI thread here.
			OnChange: func(tabs []string) { w.changed <- tabs },
		})
		if err != nil {
			log.Fatal(err)
		}
		if err := w.d.Load(ctx); err != nil { // the watch starts after the read
			log.Print(err)
		}
		return w
	}
	next := func(w window) []string {
		select {
		case tabs := <-w.changed:
			return tabs
		case <-ctx.Done():
			return nil
		}
	}
	a, b := open(), open()

	a.d.Set("chat-1", "typed in window A")
	_ = a.d.Flush(ctx) // or let the edits settle
	tabs := next(b)
	d, _ := b.d.Get("chat-1")
	fmt.Printf("B: %v changed: %q\n", tabs, d.Text)

	b.d.Set("chat-2", "typed in window B")
	_ = b.d.Flush(ctx)
	tabs = next(a)
	d, _ = a.d.Get("chat-2")
	fmt.Printf("A: %v changed: %q\n", tabs, d.Text)

	for _, w := range []window{a, b} {
		_ = w.d.Close(ctx) // stops the watch first
		_ = w.st.Close(ctx)
	}
	// Output:
	// B: [chat-1] changed: "typed in window A"
	// A: [chat-2] changed: "typed in window B"
}
