package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/offmain/offmain/internal/oneline"
)

var (
	// ErrClosed is returned by Save, Remove and Open after [Store.Close].
	ErrClosed = errors.New("statefile: store closed")

	// ErrCorrupt is matched (with errors.Is) by the error Load returns when
	// the file exists but does not parse as the File's type, and by a
	// watch's report of such a file. Load renames the bytes aside when it
	// can (not in a read-only directory, say); they are never deleted
	// while they are among the newest copies kept (see "Files on disk" in
	// the package documentation). To tell where
	// they are, take the [*CorruptError] with errors.As: its Aside is
	// empty when they are still at Path.
	ErrCorrupt = errors.New("statefile: corrupt file")

	// errReentrant is the error of a Flush called on a path's writer (from
	// OnError, Trace, or a MarshalJSON or UnmarshalJSON that a save or
	// Load runs) that would have to wait for that writer itself: a save of
	// its own path is pending, or the path it flushes has a writer that
	// waits, directly or through others, for it. Such a Flush returns at
	// once, reporting the path pending, instead of waiting for good; so
	// does a Load of such another path (see reentry.go).
	errReentrant = errors.New("statefile: called on the writer it would wait for")
)

// CorruptError reports a file that did not parse. errors.Is(err, ErrCorrupt)
// holds for it, and errors.Is and errors.As see both the decoding error and
// the move's. Load moves the bytes aside when it can and names where in
// Aside; a watch ([File.Watch]) never moves them. Aside is empty when the
// bytes are still at Path: for a watch, and for a Load whose rename failed
// (AsideErr says why; the next save retries the move and fails rather than
// overwrite them). A rename that happened but whose directory fsync failed
// sets both Aside and AsideErr.
type CorruptError struct {
	Path     string // the state file
	Aside    string // where its bytes were moved; empty if they are still at Path
	Err      error  // the decoding error
	AsideErr error  // why moving the bytes aside failed (or its directory fsync); nil if it worked or was not tried
}

func (e *CorruptError) Error() string {
	var where string
	switch {
	case e.Aside == "" && e.AsideErr != nil:
		where = " left in place (moving it aside failed: " + e.AsideErr.Error() + ")"
	case e.Aside == "":
		where = " left in place"
	case e.AsideErr != nil:
		where = " moved to " + e.Aside + " (directory not synced: " + e.AsideErr.Error() + ")"
	default:
		where = " moved to " + e.Aside
	}
	return oneline.Fold("statefile: corrupt file " + e.Path + where + ": " + errText(e.Err))
}

// Unwrap returns the decoding error and, if moving aside failed, its error.
func (e *CorruptError) Unwrap() []error {
	errs := make([]error, 0, 2)
	for _, err := range []error{e.Err, e.AsideErr} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Is reports whether target is [ErrCorrupt].
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// NotDrainedError is returned by Flush and Close when a path's newest
// state queued before the call is not on disk: either the context ended
// first (the path is in Pending and Err is the context's error), or the
// Flush ran on a writer that could not wait for the path (it is in
// Pending), or the path's newest save or remove failed and so did the
// Flush's retry of it (the path is in Failed with the retry's error; see
// "Failures and retries" in the package documentation). A failed save
// that a later save or remove of the same path superseded by succeeding is
// not in Failed: the file holds the newest state. The writers keep going
// after a Flush gives up; nothing queued is dropped.
type NotDrainedError struct {
	Pending []string         // paths still being written when the Flush returned, sorted
	Failed  map[string]error // paths whose newest save, remove or encode failed, each with its error: see [Store.Flush]
	Err     error            // why Pending is not empty (ctx.Err(), or a wait a writer cannot make), else nil
}

func (e *NotDrainedError) Error() string {
	var parts []string
	if len(e.Pending) > 0 {
		p := fmt.Sprintf("%d pending (%s)", len(e.Pending), strings.Join(e.Pending, ", "))
		if e.Err != nil {
			p += ": " + e.Err.Error()
		}
		parts = append(parts, p)
	}
	for _, p := range e.failedPaths() {
		parts = append(parts, fmt.Sprintf("failed %s: %s", p, oneline.Cause(p, e.Failed[p])))
	}
	return oneline.Fold("statefile: not drained: " + strings.Join(parts, "; "))
}

// Unwrap returns Err followed by every failure, so errors.Is(err,
// context.DeadlineExceeded) holds when the deadline passed and errors.As
// finds a failed save's own error (an *fs.PathError, a *json.UnsupportedValueError).
func (e *NotDrainedError) Unwrap() []error {
	errs := make([]error, 0, 1+len(e.Failed))
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	for _, p := range e.failedPaths() {
		errs = append(errs, e.Failed[p])
	}
	return errs
}

func (e *NotDrainedError) failedPaths() []string {
	paths := make([]string, 0, len(e.Failed))
	for p := range e.Failed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

func itoa(i int) string { return strconv.Itoa(i) }

// errText is err's text, or "<nil>" for nil, as fmt prints it.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// wrapDisk names path in a failed commit step's error: the step's own
// error names the temp file (".<name><digits>") or the directory it
// touched, which tells a person nothing. The result is an *fs.PathError of
// the state file whose text keeps the step and the cause ("statefile: save
// /home/u/app/anchors.json: write temp file: no space left on device");
// its Err unwraps to the step's own error, so errors.Is(err,
// syscall.ENOSPC) holds. nil stays nil.
func wrapDisk(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: "statefile: " + op, Path: path, Err: &stepError{path: path, err: err}}
}

// stepError is a commit step's error, worded for the state file at path.
type stepError struct {
	path string
	err  error
}

func (e *stepError) Error() string { return oneline.Fold(stepText(e.path, e.err)) }
func (e *stepError) Unwrap() error { return e.err }

// pathError names path in an error of the op on it ("update", "encode").
func pathError(op, path string, err error) error {
	return &fs.PathError{Op: "statefile: " + op, Path: path, Err: err}
}

// stepText is err's text with the temp file or directory it names
// replaced by what it is to path.
func stepText(path string, err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return joinStep(pe.Op, role(path, pe.Path), pe.Err)
	case errors.As(err, &le):
		return joinStep(le.Op, "temp file over it", le.Err)
	}
	return err.Error()
}

func joinStep(op, what string, err error) string {
	if what != "" {
		op += " " + what
	}
	return op + ": " + errText(err)
}

// role says what name is to the state file path: itself (""), its
// directory or a parent, or the temp file beside it.
func role(path, name string) string {
	dir := filepath.Dir(path)
	switch {
	case name == path:
		return ""
	case name == dir:
		return "directory"
	case filepath.Dir(name) == dir && strings.HasPrefix(filepath.Base(name), "."+filepath.Base(path)):
		return "temp file"
	}
	return name
}
