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
// [Open] does not touch the disk either: it queues the file's read on
// statefile's writer for the path, behind any saves already queued there,
// and returns. Until the read lands ([Store.Loaded] closes), Get and Tabs
// know only the drafts set since Open, which win over the file's; saves
// wait for the read, as a save before it would drop the file's drafts.
// What the read met goes to the statefile.Store's OnError (through
// statefile.Store.Report), and [Store.Load] returns it, waiting under a
// context: call it off the GUI goroutine. anchors works the same way.
//
// A draft is kept until the app deletes it, however old: a person's unsent
// text is never dropped by a default. An app may set [Options.MaxAge], and
// [Options.OnExpire] is then told which drafts the read dropped.
//
// At quit, call [Store.Close] (or [Store.Flush], or add the Store to a
// flush.Hook, beside the statefile.Store: adding that one alone would not
// save the edits still settling): it queues the last edit at once and
// waits for it under a deadline.
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
// drafts back. A file whose bytes do not parse (another program may still
// be writing it) is left where it is: the Store keeps its drafts and does
// not save over it; its next save, after an edit, has statefile move those
// bytes aside first.
//
// # The file
//
// Each save writes the whole file: JSON as encoding/json writes it, on one
// line with map keys sorted. Laid out for reading, a file with two drafts:
//
//	{
//	  "version": 1,
//	  "drafts": {
//	    "tab-1": {
//	      "text": "hello, wor",
//	      "updated_at": "2026-03-02T09:15:04.123456789Z"
//	    },
//	    "tab-2": {
//	      "text": "see attached",
//	      "attachments": ["/home/me/a.png"],
//	      "updated_at": "2026-03-02T09:16:00Z"
//	    }
//	  }
//	}
//
// Its fields:
//
//   - "version" is 1, the only format so far.
//   - "drafts" maps each tab to its [Draft]: "text"; "attachments", the
//     files' paths, left out when there are none; "updated_at", an RFC 3339
//     time (UTC when the Store stamped it). The read drops a draft with no text
//     and no attachments, and, if the app set [Options.MaxAge], one older
//     than that.
//   - "deleted", written only by a Store with [Options.Watch], maps a tab to
//     when its draft was deleted: {"tab-3": "2026-03-02T09:17:00Z"}. A Store
//     without Watch ignores it.
//   - With nothing left to write, the file is removed rather than saved
//     empty.
//
// Readers ignore fields they do not know. A file whose "version" is higher
// than 1, written by a newer release, is never read as version 1 nor saved
// over: [Store.Load] returns an error matching statefile.ErrNewerVersion and
// the Store keeps its drafts in memory only, so running an older release of
// an app over a newer file never destroys it. A file without "version" is
// read as version 1.
//
// A file that does not decode into this shape (empty, cut short, "drafts"
// not an object) is renamed by statefile to "<name>.corrupt-<UTC time>"
// beside it when the directory allows (statefile keeps the newest few such
// copies: see "Files on disk" in its documentation); the Store starts empty and
// saves as usual, and [Store.Load] returns an error matching
// statefile.ErrCorrupt. After any other read error (EACCES, EIO, EISDIR, a
// network home not mounted yet) the Store keeps every edit in memory and
// saves nothing, so a file that could not be read is never overwritten;
// it reads the file again, with a growing backoff and at every save due
// and every Flush, and once a read succeeds merges the file's drafts under
// the edits made meanwhile and saves them (see [Store.Load]). Until then
// Load, and Flush after an edit, return that error.
//
// # Stability
//
// The module is v0, so the API may still change; every change is listed in
// the repository's CHANGELOG.md. The file is the users' data: a release
// that changes its format writes a higher "version" and still reads every
// earlier version, so drafts saved by one release survive the next.
package drafts
