// Package drafts keeps a composer's unsent drafts, one per tab, in one JSON
// state file, without ever making the caller wait on the disk.
//
// [Store.Set] is meant to be called on every edit, from the GUI's main
// goroutine: it changes memory and marks the store dirty. A save is queued
// through [statefile] once the edits pause for [Options.Settle], and no later
// than [Options.MaxWait] after the first unsaved edit, so a person typing
// without pause still has their text on disk every few seconds. Encoding and
// every disk operation happen on statefile's writer.
//
// At quit, call [Store.Close] (or [Store.Flush], or add the Store to a
// flush.Hook): it queues the last edit at once and waits for it under a
// deadline.
//
// # Several windows
//
// With [Options.Watch], a Store follows the file as other processes (a
// second window of the app) save it, through statefile's File.Watch, which
// never reports this Store's own saves. What they saved is merged tab by
// tab, and the draft with the later UpdatedAt wins: an edit made here,
// saved or not, is never replaced by an older one, and the newest edit of a
// tab edited in two windows wins in both (on equal times, the file's).
// [Options.OnChange] is then told which tabs changed.
//
// Each save writes every tab, so a window that saves before it has merged
// another's newest save leaves that save's new drafts out, without meaning
// to delete them. A draft missing from the file is therefore kept, and
// written back. Deletes travel instead as tombstones: a watching Store writes
// when each tab's draft was deleted ("deleted" in the JSON) for an hour,
// and drops any draft of that tab last updated before it. While such a
// tombstone is kept the file stays, even with no draft left; a save or an
// Open after the hour removes it. A file that someone else removed (a Store
// that does not watch, a person) deletes nothing: the Store writes its
// drafts back. A corrupt one is moved aside by statefile, and the Store
// writes its drafts back in its place.
package drafts
