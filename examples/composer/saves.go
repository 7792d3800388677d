package main

import (
	"fmt"

	"github.com/offmain/offmain/examples/internal/chatstate"
)

// saver is the app's chatstate.Saver, with setDraft under the name keys.go
// calls it by.
type saver struct{ chatstate.Saver }

func (s saver) setDraft(chat, text string) error { return s.SetDraft(chat, text) }

// describeErr shortens an error for the one-line status.
func describeErr(what string, err error) string {
	return fmt.Sprintf("%s: %v", what, err)
}
