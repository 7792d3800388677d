package statefile_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/offmain/offmain/statefile"
)

type Settings struct {
	Theme string            `json:"theme"`
	Panes map[string]string `json:"panes"`
}

// Open a store, save from the UI goroutine (an enqueue), load, and flush
// under one deadline at quit.
func Example() {
	dir, _ := os.MkdirTemp("", "statefile-example")
	defer os.RemoveAll(dir)

	store := statefile.NewStore(statefile.Options{})
	settings, err := statefile.Open[Settings](store, filepath.Join(dir, "settings.json"))
	if err != nil {
		panic(err)
	}

	panes := map[string]string{"left": "chats"}
	// Save takes ownership of its value: hand over a copy of the map, so
	// the UI can go on changing its own.
	settings.Save(Settings{Theme: "dark", Panes: maps.Clone(panes)})
	panes["left"] = "files" // does not touch the queued save

	got, err := settings.Load(context.Background()) // waits for the save queued before it
	fmt.Println(got.Theme, got.Panes["left"], err)

	// At quit: everything queued reaches the disk, or we learn what did not.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := store.Close(ctx); err != nil {
		fmt.Println("not drained:", err)
	}
	fmt.Println(settings.Save(Settings{}) == statefile.ErrClosed)
	// Output:
	// dark chats <nil>
	// true
}
