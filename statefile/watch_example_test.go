package statefile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/offmain/offmain/statefile"
)

// Watch a state file for changes made by another process (here, a person's
// editor): the Store's own saves are not reported.
func ExampleFile_Watch() {
	dir, _ := os.MkdirTemp("", "statefile-watch")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "theme.json")

	store := statefile.NewStore(statefile.Options{})
	theme, _ := statefile.Open[string](store, path)
	theme.Save("dark")
	theme.Flush(context.Background())

	changed := make(chan string, 1)
	stop, err := theme.Watch(func(v string, err error) {
		if err != nil { // removed (fs.ErrNotExist) or corrupt (statefile.ErrCorrupt)
			v = "error"
		}
		changed <- v // runs on a goroutine of statefile: hand over, do not block
	})
	if err != nil {
		panic(err)
	}
	theme.Save("light") // our own save: not reported
	theme.Flush(context.Background())

	// Another program saves as editors do: a temp file renamed over.
	os.WriteFile(path+".tmp", []byte(`"solarized"`), 0o600)
	os.Rename(path+".tmp", path)
	fmt.Println("changed to", <-changed)

	stop() // or store.Close, which stops every watch
	store.Close(context.Background())
	// Output:
	// changed to solarized
}

// With Options.Exclusive, a second Store (in any process) that opens the
// same path learns who holds it instead of racing it.
func ExampleOptions_exclusive() {
	dir, _ := os.MkdirTemp("", "statefile-lock")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state.json")

	first := statefile.NewStore(statefile.Options{Exclusive: true})
	_, err := statefile.Open[int](first, path)
	fmt.Println("first:", err)

	second := statefile.NewStore(statefile.Options{Exclusive: true})
	_, err = statefile.Open[int](second, path)
	var locked *statefile.LockedError
	fmt.Println("second:", errors.Is(err, statefile.ErrLocked), errors.As(err, &locked) && locked.PID == os.Getpid())

	first.Close(context.Background()) // releases the lock
	_, err = statefile.Open[int](second, path)
	fmt.Println("second after Close:", err)
	second.Close(context.Background())
	// Output:
	// first: <nil>
	// second: true true
	// second after Close: <nil>
}
