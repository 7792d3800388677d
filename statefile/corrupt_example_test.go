package statefile_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/offmain/offmain/statefile"
)

// Read the state at start: a missing file means defaults; a corrupt one
// was moved aside (when the directory allowed) and also means defaults;
// any other error (EACCES, EIO) means the file is there but unread, so the
// app must not save over it: statefile would replace it.
func Example_load() {
	dir, _ := os.MkdirTemp("", "statefile-load-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "settings.json")
	_ = os.WriteFile(path, []byte(`{"theme":"da`), 0o600) // cut short by a crash

	// Zero Options: failed saves go to slog.Default as they happen.
	store := statefile.NewStore(statefile.Options{})
	defer store.Close(context.Background())
	settings, err := statefile.Open[Settings](store, path)
	if err != nil {
		log.Fatal(err)
	}
	got, err := settings.Load(context.Background()) // off the GUI goroutine: it waits on the disk
	var ce *statefile.CorruptError
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		got = Settings{Theme: "light"} // first run
	case errors.As(err, &ce):
		log.Print(err) // one line, naming where the bytes went
		if ce.Aside == "" {
			return // still in place: the next save fails rather than replace them
		}
		fmt.Println("kept aside:", strings.HasPrefix(filepath.Base(ce.Aside), "settings.json"+".corrupt-"))
		got = Settings{Theme: "light"}
	default:
		log.Print(err) // unread, not absent: do not save this path
		return
	}
	fmt.Println("theme:", got.Theme)
	_ = settings.Save(got)
	// Output:
	// kept aside: true
	// theme: light
}
