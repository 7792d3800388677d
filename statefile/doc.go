// Package statefile saves small JSON state files off the caller's goroutine:
// coalescing, atomic, durable, and never on the GUI's main thread.
//
// Under agent-like disk load (git, rg, find, large writes) a 64 KiB
// temp-file-and-rename save measured about 1.0 s at p95 on a real desktop,
// and 44 % of such saves took longer than a 16.7 ms frame. So [File.Save]
// only hands the value to the path's writer and returns; encoding and every
// disk operation run on the writer.
//
// # The contract
//
//   - Save and Remove never encode and never touch the disk. They return
//     at once even while the path's writer is stuck in a write that never
//     finishes. Disk and encode errors arrive later, through
//     [Options.OnError] (or [Options.Logger]) as they happen, and through
//     every Flush for as long as the path's newest state is not on disk.
//     With zero Options they go to [slog.Default], so a disk-full or
//     permission error is never silent until quit; with OnError set and
//     Logger nil they are not logged as well (the qos package's rule); an
//     app that wants silence sets Logger to slog.New(slog.DiscardHandler).
//   - A save or remove that failed on the disk is kept and tried again
//     until it lands or a newer op of the path replaces it: by a backoff
//     timer while the app runs (1 s after the failure, then twice as late
//     each time, at most 30 s apart) and at once by every Flush and Close.
//     [Options.OnRecovered] says when a path that failed is saved again.
//     See "Failures and retries".
//   - One writer per path: saves that run, run in call order. A queued save
//     that a newer one replaced before it started is skipped (it is counted
//     in [SaveTrace.Superseded]); the file always ends as the last save left
//     it. Different paths are written in parallel, at most
//     [Options.MaxParallel] at once, not counting writers stuck in one step
//     for over a second (a hung disk must not stop every path).
//   - A save whose encoded bytes equal what this Store last wrote to the
//     path, while the file still holds them (the file is read and its
//     bytes compared: an lstat(2) can be stale on NFS, SMB and FUSE),
//     writes nothing and fsyncs nothing; its [SaveTrace] says Unchanged.
//   - Load waits for the saves queued before it, then reads, so a Load
//     right after a Save sees that value. New saves cannot starve it.
//     Called from the path's own writer (a MarshalJSON, OnError, Trace),
//     Load reads the disk as it is and Flush returns [ErrReentrant]:
//     neither waits for itself.
//   - A file that does not parse is renamed aside to
//     "<name>.corrupt-<UTC time>" when the directory allows it; Load
//     returns the zero value and an error matching [ErrCorrupt], whose
//     [CorruptError] names the copy (Aside) or says the bytes are still in
//     place (Aside empty, AsideErr why). Only Load, and a save about to
//     replace unparsable bytes nobody has moved, rename it; such a save
//     fails while the rename does. A watch never moves a file: it reports
//     bytes that stay unparsable for 2 s and leaves them in place (see
//     [File.Watch]). At most [Options.MaxCorrupt] copies (3 by default)
//     are kept per path: a copy is removed only when a newer kept one
//     holds the same bytes, or when that many newer, different ones are
//     kept, so the copy a Load just reported is never the one removed.
//   - Any other Load error (EACCES, EIO, a context that ended) is only
//     reported: the File does not remember it, and a later Save or Remove
//     replaces the file it could not read (except with Migrations: a file
//     whose version cannot be read is never replaced). An app that must not lose such a
//     file does not save that path until a Load has succeeded or returned
//     an error matching fs.ErrNotExist or [ErrCorrupt]; drafts and
//     anchors work that way, in memory, and tell the app through their
//     Load.
//   - Durable saves (the default) write a temp file in the same directory,
//     fsync it, rename it over the destination and fsync the directory.
//     Without the last step the rename itself can be lost in a power cut
//     (see rename(2) and fsync(2): "Calling fsync() does not necessarily
//     ensure that the entry in the directory containing the file has also
//     reached disk. For that an explicit fsync() on a file descriptor for
//     the directory is also needed."). No anchor we studied (Chromium's
//     ImportantFileWriter, Firefox's JSONFile, AndroidX DataStore,
//     renameio) does that step.
//   - A temp file is named "." + the name + a random int64 in decimal
//     (renameio's shape); a name over 235 bytes gives instead its first
//     218 bytes, "~" and 16 hex digits of its SHA-256, so the temp name
//     fits in 255 bytes (NAME_MAX) and 255 UTF-16 units (Windows) for
//     every legal name.
//   - Temp files left by a crash are swept when a path is first opened
//     (each directory is read once per Store), taking only names of the
//     exact shape for that path and not a sibling's. A save
//     holds its temp file locked until the rename, and holds a shared lock
//     on the directory from the temp file's creation to that claim, so the
//     sweep leaves alone a save in flight in another process or Store. On a
//     filesystem without flock(2) (ENOLCK, EOPNOTSUPP or ENOSYS: some SMB,
//     NFS, 9p and FUSE mounts) saves work unclaimed, and the sweep removes
//     nothing, as it cannot tell a live save's temp file from a dead one;
//     crash leftovers (".<name><digits>") stay there. Windows has no
//     such locks and needs none: see Windows below.
//   - [File.Watch] reports changes made by anyone but this Store (another
//     process, an editor), coalesced, never echoing the Store's own saves.
//     [Options.Exclusive] makes a Store the only writer of its paths
//     across processes, with an advisory lock per path.
//   - No idle goroutines: a writer runs only while some path has queued
//     work.
//   - Flush and Close wait for what was queued before them, under the
//     caller's context, try a failed path once more, and report in a
//     [*NotDrainedError] each path whose newest state is not on disk after
//     that, however often it was reported before. [Store.FlushExcept]
//     leaves out the paths another part of the app flushes and reports
//     (a drafts or anchors store's file), so each failure is reported once,
//     by its owner.
//
// # Read-modify-write, defaults, migrations, corruption
//
// [File.Update] queues a function of the current value, like DataStore's
// updateData or Chromium's JsonPrefStore::SetValue: two parts of an app
// that own different fields of one file each change their own, and neither
// drops the other's change. It is an enqueue like Save, with no
// allocation but one per 64 queued (BenchmarkSave and BenchmarkUpdate: 13
// to 26 ns a Save, 120 to 240 ns an Update on a loaded 2-core machine,
// most of it the collector scanning the millions of functions the
// benchmark queues behind a stuck writer; 13 to 58 ns with GOGC=off).
// None may be skipped, so while the writer is stuck every queued function
// is held in memory: for a T of 16 bytes, 37 bytes each (the benchmark's
// B/op) plus what it captures. The
// writer runs the functions queued while it was busy in call order and
// writes once. It reads the file for each such batch and decodes it afresh,
// so each function gets a value of its own, which it may change in place,
// and a function that fails leaves nothing half-changed behind. It does not
// keep the bytes it last wrote to skip that read: only a read can tell
// that another NFS, SMB or FUSE client replaced the file with bytes of the
// same size (see the unchanged saves above). After a failed save, the
// batch starts from that save's value, the newest the app queued.
//
// [OpenWith] takes per-file [FileOptions]: a Default for a missing or
// empty file, an OnCorrupt handler that supplies a replacement for a file
// that does not parse (the bytes are still moved aside first; DataStore's
// ReplaceFileCorruptionHandler), and versioned [Migration] steps. The
// version lives in the file, as the integer member "version" of its
// top-level JSON object (absent: version 0), so the type must carry it and
// every value saved, Default's included, must hold the newest version. At
// the first read or op of the path, its writer runs the steps above the
// file's version in order, copies the old file durably to
// "<name>.v<old version>.bak", replaces the file durably with the result,
// then removes the copy; a crash leaves the old file (migrated again at
// the next start) or the new one. The version is checked again at every
// read (Load, an Update's base, a watch's report) and before every save
// and remove, since another process may write the file at any time (a
// second window after an auto-update, a sync tool bringing another
// machine's copy): a file whose version is newer than the newest step is
// left untouched and reported as a [*VersionError], never decoded
// lossily, and every save and remove of the path fails with it, so running
// an older release never destroys a newer file; an older release's file
// is migrated in memory for the read, and the next save writes the newest
// version. The check before a save reads the file and scans its top level
// up to "version" (Go's encoder writes a struct's fields in order, so
// that is the first member): 74 µs for a 64 KiB file on ext4, against 8 ms
// for the durable save itself (BenchmarkCheckBeforeSave and
// BenchmarkSaveDurable, go test -bench 'CheckBeforeSave|SaveDurable'
// ./statefile, on a loaded 2-core VM). A newer file written in the
// microseconds between that read and the rename is still replaced;
// [Options.Exclusive] closes that window between Stores that use it.
//
// Moving from other libraries:
//
//   - DataStore: dataStore.data.first() is [File.Load]; updateData { it.copy(...) }
//     is Update(func(v T) (T, error) { ...; return v, nil }); the serializer's
//     defaultValue is [FileOptions.Default]; ReplaceFileCorruptionHandler is
//     [FileOptions.OnCorrupt]; a DataMigration is a [Migration], but
//     ordered by version rather than asked shouldMigrate, and its cleanUp
//     is the removal of the ".bak" copy.
//   - electron-store: store.get is Load (of the whole value); store.set(key, v)
//     is an Update that sets that field; defaults is Default; migrations keyed
//     by app version become [Migration] steps numbered by file format, and a
//     file from a newer release is refused rather than rewritten.
//   - SharedPreferences: getX is Load; edit().putX().apply() is Update
//     (asynchronous like apply); commit() is Update followed by [File.Flush].
//
// # Failures and retries
//
// A save or remove that failed is kept, with its value, until it lands or
// a newer Save, Update or Remove of the path replaces it (an Update builds
// on it: its value is the newest the app queued). A disk that is full for
// a moment (a download, a build, a small tmpfs home), a network home that
// dropped, a file locked by a virus scanner: each passes, and the person's
// last edit must reach the disk once it has, without another keystroke.
//
//   - While the app runs, a timer tries again 1 s after the failure, then
//     after 2, 4, 8 and 16 s, then every 30 s: a time.AfterFunc armed only
//     while a failure waits, so no goroutine waits for it and an idle
//     Store still runs none. On a disk that stays full a failed path so
//     costs one attempt every 30 s once the first few have passed: a temp
//     file created, written until the disk refuses, and removed, with no
//     fsync reached. OnError and Logger hear of it once, not at each
//     retry (a retry that fails differently is reported again).
//   - Every Flush and Close tries a failed path again at once, unless an
//     attempt of it started after the Flush began, and waits for that
//     attempt: the quit flush writes what a freed disk takes now. A Flush
//     reports the path only if that attempt failed too, with its error
//     (so an app that calls Flush every second makes an attempt a
//     second). A Flush that starts while a retry is in flight waits for
//     it; it reports the path drained only if the file then holds the
//     path's last value. After Close no timer runs; a Flush after Close
//     still tries (with [Options.Exclusive], not once the lock is
//     released). A Store dropped without Close keeps its retries going
//     while the process lives: Close it.
//   - [Options.OnRecovered] is called when the path reaches the disk after
//     OnError heard of a failure, once per run of failures, so an app can
//     clear a "not saved" warning. It is a callback of its own rather than
//     OnError with a nil error, which every existing OnError would take for
//     a failure (and many would call err.Error() on), or a field of
//     [SaveTrace], which an app would have to set Trace for and inspect
//     for every save to clear one warning. [SaveTrace.Retry] marks the
//     retries in a trace.
//   - An encode error, and an error returned by an [File.Update]
//     function, are the value's: running them again gives the same error,
//     so they are not retried. Every Flush reports the path (its newest
//     state is not on disk) until a newer op of the path succeeds; the
//     retry of a write that the same batch's earlier changes needed does
//     not clear a failed function's error. Updates
//     whose base could not be read (a read error, a newer file) do not run
//     and are kept with the failed op, to run at its retry.
//   - A [*VersionError] (the file is newer than this release knows) is
//     tried again by every Flush, not by the timer: waiting does not make
//     the file older; a person, or the newer release, must change it.
//
// drafts and anchors save through a File, so they get the retries without
// timers of their own: their Flush is the File's.
//
// # Several processes
//
// A desktop app often has more than one process over the same state: a
// second window, a helper, a sync tool, a person editing the file. Two
// things serve that, both off by default.
//
// [File.Watch] reports what others changed: one fsnotify watcher per Store,
// on the file's directory (a save renames a new file over the name). A
// change whose content is what this Store last wrote or reported is not
// news, so the Store's own saves are never echoed. Bursts are coalesced: fn
// runs once a path has been quiet for 100 ms, and at least once a second
// while events never stop; an editor's temp-and-rename and a program's
// truncate-and-write are each reported once, with the final content. Bytes
// that do not parse are re-read until they stay the same for 2 s and then
// reported as a [*CorruptError] that says they were left in place: a watch
// never moves a file (a writer may still be writing it); only Load, and a
// save that would overwrite unread bytes, move a corrupt file aside. The
// read behind a report rides the path's queue like a Load. fn runs on a
// goroutine of the package, one call at a time per watch, and may call
// Load, Save and Flush. A watched directory that is removed or renamed is
// reported gone and watched again within about a second of coming back.
//
// [Options.Exclusive] makes a Store the only writer of its paths across
// processes: the first Open of a path takes flock(LOCK_EX|LOCK_NB) (on
// Windows LockFileEx) on "<name>.lock" and writes its pid there; a second
// Exclusive Store gets a [*LockedError] (errors.Is(err, ErrLocked)) naming
// the holder's pid. The lock is held until Store.Close or the process's
// end (the kernel drops a dead holder's lock); the .lock file stays, since
// deleting a lock file while another process opens it would let two
// processes lock two different files. It is advisory: editors and Stores
// without Exclusive still write, and a watch reports them.
//
// Crash leftovers: the first Open of a directory's paths sweeps the temp
// files a crash left. A save in flight in another process has a temp file
// of the same shape, so each save holds its temp file locked from its
// creation to the rename, and the sweep removes only temp files it can
// lock; a killed process's locks die with it, so its leftovers go at once.
//
// # Ownership of saved values
//
// Save takes ownership of its argument: the value is encoded later, on the
// writer. Maps and slices are references in Go, so the caller must not
// change a map, slice or pointed-to struct after handing it to Save. Hand
// over a copy (maps.Clone, slices.Clone) or build a fresh value for each
// save; see the package example.
//
// # Few cores
//
// A writer blocked in write or fsync holds one of the runtime's Ps until
// sysmon takes it back, which it checks on a backoff of up to 10 ms in a
// mostly idle process (runtime/proc.go, sysmon and retake). With
// GOMAXPROCS=2 and another goroutine blocked in a syscall (a terminal
// reader in epoll_wait), the UI goroutine can wait that long for a P: the
// composer example measured key-to-Update p95 of 8.7 ms at the default and
// 0.6-0.7 ms at GOMAXPROCS=8 on a 2-core machine. A GUI on few cores should
// raise GOMAXPROCS by MaxParallel.
//
// # Windows
//
// renameio/v2 exports nothing on Windows (atomic replace is not guaranteed
// there, renameio issue #1). This package writes a temp file, fsyncs it
// (FlushFileBuffers) and replaces the destination with
// MoveFileEx(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH).
// Directories cannot be fsynced on Windows; that step is skipped
// ([SaveTrace].DirSync stays zero). The temp file stays open, shared for
// read and delete only, until the move is done, and a sweep deletes only a
// temp file it can open sharing nothing: so no sweep, in this process or
// another, takes a save's temp file before its move. A file another
// process has open cannot be replaced (MoveFileEx fails with
// ERROR_ACCESS_DENIED, even when that process shares delete) nor, when it
// shares nothing, read: the move and Load's open retry on
// ERROR_SHARING_VIOLATION, ERROR_ACCESS_DENIED and ERROR_LOCK_VIOLATION for
// up to one second, backing off from 1 ms to 16 ms (about 65 tries), then
// report the error; a save that fails so leaves the destination as it was
// and removes its temp file. Load opens the file sharing delete, so a Load
// does not make another process's move fail. Options.Perm is not applied
// (Windows has no mode bits; a new file gets its directory's inherited
// access control list).
//
// What this is tested on: the package's tests, as windows/amd64 binaries,
// under Wine 8 on Linux in CI (.ci/wine in the repository). That runs the
// Go runtime and these Win32 calls for real: CreateFile's share modes and
// their violations, MoveFileEx, LockFileEx between processes,
// FlushFileBuffers, delete-on-close, \\?\ long paths and drive-letter
// paths. Under Wine 8 on a shared 2-core machine, a Load of a file another
// handle held exclusively gave up after 1.00 s and 55 retries, and a save
// whose destination a reader held open after 1.10 to 1.47 s (the logs of
// TestLoadGivesUpAfterBudget and TestMoveFailsWhole); three processes
// saving one path Durable 150 times each, sweeping it from new Stores and
// loading it every 2 ms, saw no failed save or load
// (TestSharedPathProcesses; in a run before these fixes, with readers
// not paced, two of the children had 13 and 15 saves fail with "File not
// found" and 5 and 1 loads with sharing violations). What Wine cannot
// show: NTFS's
// own atomicity and durability (Wine's MoveFileEx is Linux's rename(2) and
// its FlushFileBuffers fsync(2)), antivirus and indexer filter drivers
// holding files, and whether MOVEFILE_WRITE_THROUGH makes a rename durable
// across a power cut on a real disk.
//
// # Tracing
//
// [Options.Trace] receives one [SaveTrace] per save that ran. Setting the
// environment variable OFFMAIN_TRACE to a file name appends one CSV row per
// save to that file (the header is written once, when the file is empty).
// With neither set, tracing costs Save one atomic load.
//
// # Stability
//
// The module is v0, which by Go's versioning rules promises no compatibility
// (https://go.dev/doc/modules/version-numbers): names, signatures and
// [Options] may still change, and each change is listed in the repository's
// CHANGELOG.md. The contract above is what apps build on, and no v0 or v1
// release will weaken it; that would take a new major version (a module path
// ending in /v2). That covers Save and Remove never waiting on the disk, the
// order of saves and the file ending as the last save left it, durable saves
// reaching the disk with the directory fsynced, Load after Save seeing that
// value, a corrupt file moved aside (when the directory allows) and kept
// while among the newest [Options.MaxCorrupt] distinct copies, and Flush and Close
// waiting under the caller's context and naming what did not drain. What may
// change in any release: the fields of [SaveTrace] and the columns of the
// OFFMAIN_TRACE CSV, the defaults of Options, the watch's timing, and the
// text of error messages (match errors with errors.Is and errors.As).
package statefile
