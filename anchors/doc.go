// Package anchors keeps each chat's scroll place, the item at the top of the
// transcript's view and the offset into it, in one JSON state file, without
// ever making the caller wait on the disk to save.
//
// Call [Store.Set] on every settled scroll, from the GUI's main goroutine:
// it changes memory and returns. A save is queued through [statefile] once
// the Sets pause for [Options.Settle] (no later than [Options.MaxWait]), and
// encoding and disk I/O run on statefile's writer. At most [Options.Max]
// places are kept; the least recently set goes first.
//
// [Open] does not touch the disk either: it queues the file's read on
// statefile's writer for the path, behind any saves already queued there,
// and returns. Get never waits for it: until it lands ([Store.Loaded]
// closes) Get knows only the places set since Open, which win over the
// file's, so a GUI restores a place from the file once Loaded is closed.
// Saves wait for the read, as a save before it would drop the file's
// places. What the read met goes to the statefile.Store's OnError (through
// statefile.Store.Report), and [Store.Load] returns it, waiting under a
// context: call it off the GUI goroutine. drafts works the same way.
//
// # Several windows
//
// With [Options.Watch], a Store follows the file as other processes (a
// second window of the app) save it, through statefile's File.Watch, which
// never reports this Store's own saves. The watch starts once the file has
// been read. What the others saved is merged chat by chat, and the place
// with the later UpdatedAt wins (the file's on a tie), so a place set here,
// saved or not, is never replaced by an older one; [Options.OnChange] is
// then told which chats' places changed. Once places come from other
// windows, recency is by UpdatedAt: after a merge the places are ordered by
// it, and the oldest beyond [Options.Max] are evicted, as every window
// does, so windows with the same Max keep the same places.
//
// Each save writes every place, so a window that saves before it has merged
// another's newest save leaves that save's new places out, without meaning
// to forget them. A place missing from the file is therefore kept, and
// written back. Forgets travel instead as tombstones: a watching Store
// writes when each chat was forgotten ("forgotten" in the JSON) for an
// hour, and drops any place of that chat set before it. While such a
// tombstone is kept the file stays, even with no place left. A file that
// someone else removed forgets nothing: the Store writes its places back.
// A file whose bytes do not parse (another program may still be writing
// it) is left where it is: the Store keeps its places and does not save
// over it; its next save, after a Set or Forget, has statefile move those
// bytes aside first.
//
// # The file
//
// Each save writes the whole file: JSON as encoding/json writes it, on one
// line. Laid out for reading, a file with two places:
//
//	{
//	  "version": 1,
//	  "anchors": [
//	    {
//	      "chat": "chat-1",
//	      "item": "msg-9",
//	      "offset": 12.5,
//	      "updated_at": "2026-03-02T09:15:04.123456789Z"
//	    },
//	    {
//	      "chat": "chat-2",
//	      "item": "msg-120",
//	      "offset": 0,
//	      "updated_at": "2026-03-02T09:16:00Z"
//	    }
//	  ]
//	}
//
// Its fields:
//
//   - "version" is 1, the only format so far.
//   - "anchors" lists one place per chat, least recently set first, which is
//     the order a reader takes as recency: "chat"; the [Anchor] fields
//     "item", "offset" (a JSON number, never NaN or infinite) and
//     "updated_at", an RFC 3339 time (UTC when the Store stamped it). A
//     reader keeps at most [Options.Max] places, the last ones listed.
//   - "forgotten", written only by a Store with [Options.Watch], maps a chat
//     to when it was forgotten: {"chat-3": "2026-03-02T09:17:00Z"}. A Store
//     without Watch ignores it.
//   - With nothing left to write, the file is removed rather than saved
//     empty.
//
// Readers ignore fields they do not know. A file whose "version" is higher
// than 1, written by a newer release, is never read as version 1 nor saved
// over: [Store.Load] returns an error matching statefile.ErrNewerVersion and
// the Store keeps its places in memory only, so running an older release of
// an app over a newer file never destroys it. A file without "version" is
// read as version 1.
//
// A file that does not decode into this shape (empty, cut short, "anchors"
// not a list) is renamed by statefile to "<name>.corrupt-<UTC time>" beside
// it when the directory allows (statefile keeps the newest few such copies:
// see "Files on disk" in its documentation); [Store.Load] returns an error matching
// statefile.ErrCorrupt and the Store starts empty and saves as usual. After
// any other read error (EACCES, EIO, EISDIR, a network home not mounted
// yet) the Store keeps every place in memory and saves nothing, so a file
// that could not be read is never overwritten; it reads the file again,
// with a growing backoff and at every save due and every Flush, and once
// a read succeeds merges the file's places under the ones set meanwhile and
// saves them (see [Store.Load]). Until then Load, and Flush after a Set or
// Forget, return that error.
//
// # Stability
//
// The module is v0, so the API may still change; every change is listed in
// the repository's CHANGELOG.md. The file is the users' data: a release
// that changes its format writes a higher "version" and still reads every
// earlier version, so places saved by one release survive the next.
package anchors
