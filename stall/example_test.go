package stall_test

import (
	"fmt"
	"log"
	"path"
	"sync"
	"time"

	"github.com/offmain/offmain/stall"
)

// A menu handler on the UI goroutine takes a lock that a background save
// holds across a slow write: the UI waits 50 ms, and the report says
// where.
func Example() {
	var mu sync.Mutex // guards the settings
	held, start := make(chan struct{}), make(chan struct{})
	go func() { // the background save
		mu.Lock()
		defer mu.Unlock()
		close(held)
		<-start
		slowWrite(50 * time.Millisecond)
	}()
	<-held

	// On the UI goroutine:
	stop, err := stall.Watch(stall.Options{
		OnReport: func(r stall.Report) {
			fmt.Printf("waited in %s, in %s\n", r.Wait, path.Base(r.Stack[0].Function))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	close(start)
	openSettingsMenu(&mu)
	stop()
	// Output: waited in sync, in stall_test.openSettingsMenu
}

func openSettingsMenu(mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
}

// slowWrite stands for a write to a disk that takes d.
func slowWrite(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}

// An event loop marks the handling of each event: its waits for the next
// event are never reported, a handler's long wait is.
func ExampleFrame() {
	stop, err := stall.Watch(stall.Options{
		OnReport: func(r stall.Report) {
			fmt.Printf("waited in %s, in %s\n", r.Wait, path.Base(r.Stack[0].Function))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	events := make(chan func())
	go func() { // the toolkit: two events 30 ms apart
		defer close(events)
		for _, handler := range []func(){redraw, openInMenu} {
			slowWrite(30 * time.Millisecond)
			events <- handler
		}
	}()
	for handle := range events { // the idle wait
		end := stall.Frame()
		handle()
		end()
	}
	stop()
	// Output: waited in chan receive, in stall_test.openInMenu
}

func redraw() {}

// openInMenu waits for a query of the installed apps, which takes 50 ms.
func openInMenu() {
	apps := make(chan []string, 1)
	go func() {
		slowWrite(50 * time.Millisecond)
		apps <- []string{"editor"}
	}()
	<-apps
}
