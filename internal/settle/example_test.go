package settle_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/offmain/offmain/internal/settle"
)

func Example() {
	var mu sync.Mutex // protects text and saved
	text, saved := "", ""
	done := make(chan struct{}, 1)
	s := settle.New(settle.Options{Settle: 100 * time.Millisecond}, func() {
		mu.Lock()
		saved = text // a real store copies its state here and queues a save
		mu.Unlock()
		done <- struct{}{}
	})
	defer s.Stop()

	for _, r := range "hello" { // a burst of keystrokes
		mu.Lock()
		text += string(r)
		mu.Unlock()
		s.Mark()
	}
	<-done // one callback, once the keystrokes paused for 100ms
	fmt.Println("settled:", saved)

	mu.Lock()
	text += "!"
	mu.Unlock()
	s.Mark()
	fmt.Println("flushed now:", s.Flush(), saved) // at quit: no waiting for the pause
	<-done
	fmt.Println("flushed again:", s.Flush())
	// Output:
	// settled: hello
	// flushed now: true hello!
	// flushed again: false
}
