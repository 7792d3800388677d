package anchors_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/statefile"
)

func Example() {
	dir, err := os.MkdirTemp("", "anchors-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "anchors.json")

	// Zero Options: a save that fails is logged to slog.Default when it
	// happens.
	st := statefile.NewStore(statefile.Options{})
	// Open never waits on the disk, so the GUI goroutine may call it; its
	// only errors are statefile.Open's (a closed Store).
	places, err := anchors.Open(st, path, anchors.Options{Max: 2})
	if err != nil {
		log.Fatal(err)
	}
	// On every settled scroll, from the GUI goroutine: memory only.
	places.Set("chat-a", anchors.Anchor{Item: "msg-120", Offset: 48})
	places.Set("chat-b", anchors.Anchor{Item: "msg-7", Offset: 0})
	places.Set("chat-c", anchors.Anchor{Item: "msg-3", Offset: 12.5}) // Max 2: chat-a goes

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := places.Close(ctx); err != nil { // at quit
		log.Print(err)
	}
	if err := st.Close(ctx); err != nil {
		log.Print(err)
	}

	st = statefile.NewStore(statefile.Options{}) // next start
	defer st.Close(context.Background())
	places, err = anchors.Open(st, path, anchors.Options{Max: 2})
	if err != nil {
		log.Fatal(err)
	}
	// Off the GUI goroutine (a GUI waits on places.Loaded() and redraws):
	// wait for the read and log what it met. With a corrupt file (kept
	// aside) or an unreadable one (never overwritten: places then saves
	// nothing), places still works: log and go on.
	if err := places.Load(ctx); err != nil {
		log.Print(err)
	}
	for _, chat := range []string{"chat-a", "chat-b", "chat-c"} {
		a, ok := places.Get(chat)
		fmt.Println(chat, ok, a.Item, a.Offset)
	}
	places.Close(ctx)
	// Output:
	// chat-a false  0
	// chat-b true msg-7 0
	// chat-c true msg-3 12.5
}
