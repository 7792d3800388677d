// Package statefile saves small JSON state files off the caller's
// goroutine: coalescing, atomic, durable, and never on a GUI's main thread.
//
// A desktop app's main thread must not wait on the disk: under load from
// other programs (builds, searches, large writes) a small save can take a
// second, far longer than a frame. So [File.Save] only hands the value to
// the path's writer goroutine and returns; encoding and every disk
// operation happen there. How it works, and why each part exists, is in
// the repository's DESIGN.md; what was tested, under which faults, in
// RELIABILITY.md.
//
//	store := statefile.NewStore(statefile.Options{})
//	settings, err := statefile.Open[Settings](store, path)
//	settings.Save(s)              // an enqueue, on any goroutine
//	s, err = settings.Load(ctx)   // waits for the saves queued before it
//	err = store.Flush(ctx)        // at quit: nil means every file holds its newest state
//
// # What an app may rely on
//
//   - Save, Update and Remove never encode and never touch the disk: they
//     return at once, even while the path's writer is stuck in a write that
//     never finishes. Their only error is [ErrClosed].
//   - One writer per path: a path's saves run in call order, and the file
//     ends as the last one left it. A save that a newer one replaced before
//     it started is skipped, and a save of the bytes the file already holds
//     writes nothing. Different paths are written in parallel
//     ([Options.MaxParallel]); a path stuck on a hung disk never stops the
//     others.
//   - A durable save ([Durable], the default) writes a temp file in the
//     same directory, fsyncs it, renames it over the file and fsyncs the
//     directory, so that after a power cut the file holds the last save a
//     Flush reported, never a mix: fsync(2) notes that an fsync of the file
//     does not make its directory entry durable, "For that an explicit
//     fsync() on a file descriptor for the directory is also needed."
//   - Load waits for the saves queued before it, so a Load right after a
//     Save sees that value. A file that does not parse is moved aside,
//     never deleted (see [CorruptError] and "Files on disk").
//   - Flush and Close wait, under the caller's context, for what was
//     queued before them, and return nil only when each file holds the
//     newest state the app gave it: a save that failed is tried again at
//     once, and a file removed, or left unparsable, from outside since this
//     Store saved it is written again (unparsable bytes are moved aside
//     first). A file another program saved over, in a form that parses, is
//     theirs: last writer wins. Otherwise a [*NotDrainedError] names each
//     path and why. The file is not read again, and its save counts as
//     landed, when ctx has ended by the time the Flush gets to the path,
//     when a watch follows it, and with Exclusive once Close released it.
//   - A failure is never silent: it goes to [Options.OnError] and
//     [Options.Logger] when it happens, and to every Flush for as long as
//     the path's newest state is not on disk. A save that failed on the
//     disk is kept and tried again (see "Failures and retries").
//   - No goroutine runs while nothing is queued.
//
// # Failures and retries
//
// A save or remove that failed is kept, with its value, until it lands or
// a newer Save, Update or Remove of the path replaces it (an Update builds
// on it: its value is the newest the app queued). A disk full for a moment,
// a network home that dropped, a file held by a virus scanner: each passes,
// and the person's last edit must reach the disk once it has. While the app
// runs a timer tries again after a second, then twice as late each time, at
// most every 30 s; every Flush and Close tries again at once. OnError hears
// of a failure once, not at each retry that fails the same way, and
// [Options.OnRecovered] when the path is saved again. An encode error, or
// an error an Update's function returned, is the value's: it is reported
// and not retried. A file a newer release of the app wrote is never
// replaced (see [VersionError]): only a Flush tries such a save again.
//
// # Read-modify-write, defaults, migrations
//
// [File.Update] queues a function of the current value, like DataStore's
// updateData: two parts of an app that own different fields of one file
// each change their own, and neither drops the other's change. [OpenWith]
// takes per-file [FileOptions]: a Default for a missing or empty file, an
// OnCorrupt handler that supplies a replacement for a file that does not
// parse (DataStore's ReplaceFileCorruptionHandler), and versioned
// [Migration] steps that bring an older file to the newest version, with
// the old file kept until the new one is durable.
//
// # Several processes
//
// [File.Watch] reports the changes others make to a file (another process,
// an editor, a sync client), coalesced, and never the Store's own saves.
// [Options.Exclusive] makes a Store the only writer of its paths across
// processes, through an advisory lock per path. Both are off by default.
//
// # Files on disk
//
// What a Store leaves beside a state file "<name>", which other programs
// and releases of this package may meet:
//
//   - "<name>" holds the value as encoding/json writes it, followed by one
//     newline.
//   - ".<name><digits>" is a temp file of a save in flight or of one a crash
//     left, digits being a non-negative int64 in decimal (the shape of
//     renameio's temp files). For a name longer than 235 bytes the stem is
//     its first 218 bytes, "~" and 16 hex digits of its SHA-256, so the temp
//     name fits in 255 bytes. A save holds its temp file locked (flock(2);
//     on Windows, the handle that created it) until the rename; the first
//     Open of a path in a Store removes the temp files of its shape that no
//     live process holds. On a filesystem without flock(2) (ENOLCK,
//     EOPNOTSUPP: some network mounts) no holder can be told apart, so the
//     temp files a crash leaves there stay until someone removes them.
//   - "<name>.corrupt-<UTC time>" (20060102T150405.000000000Z) is a file
//     that did not parse, moved aside by Load, or by a Flush that found it
//     in place of the last save. The newest three distinct
//     copies are kept; a copy is removed only when a newer kept one holds
//     the same bytes, or when three newer, different ones are kept.
//   - "<name>.lock" is the lock file of [Options.Exclusive], holding the
//     holder's process id on its first line. It is never removed.
//   - "<name>.v<N>.bak" is the file at version N, kept while a migration
//     replaces it and removed after.
//   - With Migrations, a file's version is the integer member "version" of
//     its top-level JSON object, read as encoding/json reads it into a field
//     tagged `json:"version"` (see [Migration]); a file without one is
//     version 0.
//
// Directories a Store creates are 0700, and files 0600 unless
// [Options.Perm] says otherwise.
//
// # Tracing
//
// [Options.Trace] receives one [SaveTrace] per save that ran. Setting the
// environment variable OFFMAIN_TRACE to a file name appends one CSV row per
// save to that file (the header is written once, when the file is empty).
// With neither set, tracing costs Save one atomic load.
//
// # Platforms
//
// Linux is where this package is measured and tested in full. On Windows a
// save writes its temp file, flushes it (FlushFileBuffers) and moves it
// over the file with MoveFileEx(MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH), retrying for up to a second while another
// process holds the file; directories cannot be fsynced there, and
// [Options.Perm] is not applied. Its tests run as Windows binaries under
// Wine, which does not show NTFS's own atomicity and durability. macOS code
// compiles, and no test runs there. DESIGN.md has the details.
//
// # Stability
//
// The module is v0 (https://go.dev/doc/modules/version-numbers): names and
// [Options] may still change, and each change is listed in the repository's
// CHANGELOG.md. The guarantees under "What an app may rely on" and the
// files under "Files on disk" are what apps build on; no v0 or v1 release
// will weaken them. The fields of [SaveTrace], the defaults of Options, the
// watch's timing and the text of errors may change in any release: match
// errors with errors.Is and errors.As.
package statefile
