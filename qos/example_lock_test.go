package qos_test

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/offmain/offmain/qos"
)

// A housekeeping pass that needs state the GUI also locks copies what it
// needs under the lock, at normal priority, releases the lock, and only then
// runs the slow part lowered. Taking mu inside fn instead would let the GUI
// wait behind a SCHED_IDLE thread: seconds under load (see [qos.Do]).
func ExampleDo_lock() {
	var (
		mu     sync.Mutex // the GUI takes it on every keystroke
		drafts = map[string]string{"a": "first draft", "b": "a second one"}
	)

	mu.Lock()
	snapshot := maps.Clone(drafts) // a copy: nothing slow under the lock
	mu.Unlock()

	var words int
	err := qos.Do(qos.Background, qos.ModeBackground, func() {
		for _, text := range snapshot { // the slow part, holding nothing
			words += len(strings.Fields(text))
		}
	})
	fmt.Println(words, err)
	// Output: 5 <nil>
}
