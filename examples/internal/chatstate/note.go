package chatstate

import (
	"path/filepath"
	"strings"
)

// Note is the status line's text for a failure: what failed, then why, on
// one line. An error made by errors.Join has a newline between its parts,
// which would break a one-line status (a terminal row, a label): the lines
// are joined with " | ", as offmain's own error texts are.
// A nil err gives what alone.
func Note(what string, err error) string {
	if err == nil {
		return what
	}
	lines := strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' || r == '\r' })
	return what + ": " + strings.Join(lines, " | ")
}

// Saved is the status line's text once a file whose write failed, or
// which could not be read, is saved again: it replaces the failure's note.
func Saved(path string) string {
	return "saved again: " + filepath.Base(path)
}
