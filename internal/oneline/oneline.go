// Package oneline keeps error texts on one line, for line-based logs.
//
// errors.Join puts a newline between its parts ("formed by concatenating the
// strings obtained by calling the Error method of each element of errs,
// with a newline between each string", its doc), and a log line that holds
// such a text breaks in two. Every package of this module folds such texts
// the same way: the lines joined with " | ". The reports that list several
// items (a flush, a store's paths) separate those items with "; ", so the
// two separators keep an item's own parts apart from the list.
package oneline

import (
	"errors"
	"io/fs"
	"strings"
)

// Sep is what Fold puts between the lines of a text.
const Sep = " | "

// Fold returns s with its line breaks ("\n", "\r\n", "\r") replaced by Sep;
// empty lines are dropped. A text of one line comes back as it is.
func Fold(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), Sep)
}

// joined is errors.Join's result with its text folded.
type joined []error

func (e joined) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = Fold(err.Error())
	}
	return strings.Join(parts, Sep)
}

func (e joined) Unwrap() []error { return e }

// Join is errors.Join with a one-line text: nil when every err is nil, the
// error itself when only one is not and its text is one line. errors.Is and
// errors.As see every error it joined.
func Join(errs ...error) error {
	var e joined
	for _, err := range errs {
		if err != nil {
			e = append(e, err)
		}
	}
	switch {
	case len(e) == 0:
		return nil
	case len(e) == 1 && !strings.ContainsAny(e[0].Error(), "\r\n"):
		return e[0]
	}
	return e
}

// Cause returns the text of err, a failure of the file at path, without
// the path it repeats, on one line: "save: write temp file: no space left
// on device" for "statefile: save /home/u/state.json: write temp file: no
// space left on device". A report that lists paths shows each once so.
func Cause(path string, err error) string {
	if err == nil {
		return "<nil>"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path && pe.Error() == err.Error() {
		return Fold(strings.TrimPrefix(pe.Op, "statefile: ") + ": " + pe.Err.Error())
	}
	return Fold(strings.ReplaceAll(err.Error(), path+": ", ""))
}
