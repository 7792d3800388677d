// Package mirror holds what drafts and anchors share as stores that keep a
// state file's content in memory and merge the saves of other processes
// (another window of the app) into it.
package mirror

import (
	"errors"
	"io/fs"
)

// Report applies one statefile watch report (see statefile.File.Watch) to
// a store that mirrors the file in memory:
//
//   - the file's new content is merged;
//   - a removed file is merged as an empty one: a watching store writes
//     tombstones and never removes the file, so only a store that does not
//     watch, or a person, removed it, and that deletes nothing here (the
//     store writes its state back);
//   - a corrupt file keeps memory and saves nothing: a watch leaves the
//     bytes in place (another program may still be writing them), so a
//     save now would replace them. The next save the store makes for its
//     own reasons moves them aside first (statefile does that);
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
	default: // statefile.ErrCorrupt, or unreadable
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
