// Package mirror holds what drafts and anchors share as stores that keep a
// state file's content in memory and merge the saves of other processes
// (another window of the app) into it.
package mirror

import (
	"errors"
	"io/fs"

	"github.com/offmain/offmain/statefile"
)

// Report applies one statefile watch report (see statefile.File.Watch) to
// a store that mirrors the file in memory:
//
//   - the file's new content is merged;
//   - a removed file is merged as an empty one: a watching store writes
//     tombstones and never removes the file, so only a store that does not
//     watch, or a person, removed it, and that deletes nothing here (the
//     store writes its state back);
//   - a corrupt file was moved aside by statefile: mark memory for a save
//     in its place;
//   - any other error (unreadable for now) keeps memory; statefile checks
//     again on the file's next event.
//
// merge returns the keys whose value changed, sorted, and whether the file
// lacks something memory has, which only a save tells the other processes.
// onChange, if set, gets the changed keys after merge returns.
func Report[T any](data T, err error, mark func(), merge func(T) (changed []string, resave bool), onChange func([]string)) {
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		var empty T
		data = empty
	case errors.Is(err, statefile.ErrCorrupt):
		mark()
		return
	default:
		return
	}
	changed, resave := merge(data)
	if resave {
		mark()
	}
	if len(changed) > 0 && onChange != nil {
		onChange(changed)
	}
}
