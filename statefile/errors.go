package statefile

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

var (
	// ErrClosed is returned by Save, Remove and Open after [Store.Close].
	ErrClosed = errors.New("statefile: store closed")

	// ErrCorrupt is matched (with errors.Is) by the error Load returns when
	// the file exists but does not parse as the File's type, and by a
	// watch's report of such a file. The bytes are never deleted: see
	// [CorruptError] for where they are.
	ErrCorrupt = errors.New("statefile: corrupt file")

	// ErrReentrant is matched by the error of a Flush called on a path's
	// writer (from [Options.OnError], [Options.Trace], or a MarshalJSON or
	// UnmarshalJSON that a save or Load runs) that would have to wait for
	// that writer itself: a save of its own path is pending, or the path
	// it flushes has a writer that waits, directly or through others, for
	// it. Such a Flush returns at once instead of waiting for good; so does
	// a Load of such another path. A Load of the writer's own path does
	// not fail: see [File.Load].
	ErrReentrant = errors.New("statefile: called on the writer it would wait for")
)

// CorruptError reports a file that did not parse. errors.Is(err, ErrCorrupt)
// holds for it, and Unwrap returns the decoding error. Load moves the bytes
// aside and names where in Aside; a watch ([File.Watch]) never moves them,
// and neither does a Load whose move failed: Aside is then empty, the bytes
// are still at Path, and the error's text says "left in place".
type CorruptError struct {
	Path  string // the state file
	Aside string // where its bytes were moved; empty if they are still at Path
	Err   error  // the decoding error (joined with the move's error if it failed)
}

func (e *CorruptError) Error() string {
	if e.Aside == "" {
		return "statefile: corrupt file " + e.Path + " left in place: " + e.Err.Error()
	}
	return "statefile: corrupt file " + e.Path + " moved to " + e.Aside + ": " + e.Err.Error()
}

func (e *CorruptError) Unwrap() error        { return e.Err }
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// NotDrainedError is returned by Flush and Close when a path's newest
// state queued before the call is not on disk: either the context ended
// first (the path is in Pending and Err is the context's error), or the
// Flush ran on a writer that could not wait for the path (it is in Pending
// and Err is [ErrReentrant]), or the path's newest save or remove failed
// (the path is in Failed with its error). A failed save that a later save
// or remove of the same path superseded by succeeding is not in Failed:
// the file holds the newest state. The writers keep going after a Flush
// gives up; nothing queued is dropped.
type NotDrainedError struct {
	Pending []string         // paths still being written when the Flush returned, sorted
	Failed  map[string]error // paths whose newest save, remove or encode failed, each with its error: see [Store.Flush]
	Err     error            // why Pending is not empty (ctx.Err(), ErrReentrant, or both joined), else nil
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
		parts = append(parts, fmt.Sprintf("failed %s: %v", p, e.Failed[p]))
	}
	return "statefile: not drained: " + strings.Join(parts, "; ")
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
