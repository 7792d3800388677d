package statefile

import (
	"io/fs"
	"log/slog"
)

// Options configures a [Store]. The zero value is the default for every field.
type Options struct {
	// Perm is the permission of the files the Store writes, before the
	// umask. Zero means 0o600: state files hold what a person typed.
	// Directories the Store creates are always 0o700.
	Perm fs.FileMode

	// Durability says how hard a save tries to survive a power cut.
	// Zero means [Durable].
	Durability Durability

	// MaxParallel is how many paths are written at once across the Store.
	// Zero means 4. A path is only ever written by one writer at a time. A
	// write stuck in the kernel for over a second, as on a hung disk, stops
	// counting, so the other paths go on.
	MaxParallel int

	// OnError, if set, is called on the writer goroutine with every
	// failure the app may want to show: a save, remove, Update or encode
	// that failed (before it counts as done), and what [Store.Report] is
	// given (drafts' and anchors' reads). Each error names its path: for a
	// failed step, errors.As finds an *[fs.PathError] whose Path is the
	// state file. A retry of a failed op that fails with the same text is
	// not reported again; one that fails differently is. OnError must not
	// block for long: the path's next save waits for it. It may call Save,
	// Remove, Load and Flush of any path: a Load of its own path reads the
	// disk without waiting, and a Flush of it reports the path pending.
	// Nil means failures are only logged.
	OnError func(err error)

	// OnRecovered, if set, is called on the writer goroutine when a save or
	// remove of path reaches the disk (or is found there already) after
	// OnError heard of a failure of path, with no success in between: the
	// path's newest state is on disk again, so a "not saved" warning the
	// app showed for it can go. It is called once per run of failures,
	// whether a retry or a newer save made it, and a Flush it calls reports
	// the path drained. Like OnError it must not block for long. Nil means
	// nothing is called.
	OnRecovered func(path string)

	// Logger gets one Error record for each failure OnError gets, one Info
	// record when such a path is saved again, and the watch's warnings.
	// Nil means [slog.Default]: a disk-full or permission error reaches the
	// app's log when it happens, not only at the next Flush, which may be
	// at quit or never if the app crashes. For silence, say so:
	// slog.New(slog.DiscardHandler).
	Logger *slog.Logger

	// Trace, if set, is called on the writer goroutine with one [SaveTrace]
	// for every save or remove that ran, before it counts as done. Like
	// OnError it may call Load and Flush of any path. Nil means off, unless
	// the environment variable OFFMAIN_TRACE names a CSV file to append to
	// (see the package documentation, "Tracing").
	Trace func(SaveTrace)

	// Exclusive, if set, makes the Store the only writer of its paths
	// across processes: the first Open of a path takes an advisory lock on
	// its lock file (see "Files on disk"), held until [Store.Close]; while
	// another Exclusive Store holds it, Open returns a [*LockedError]. A
	// dead holder's lock is free again. False (zero) means no lock.
	Exclusive bool
}

// Durability is how a save reaches the disk.
type Durability int

const (
	// Durable writes a temp file in the same directory, fsyncs it, renames it
	// over the destination, then fsyncs the directory so the rename itself
	// survives a power cut. Remove also fsyncs the directory.
	Durable Durability = iota

	// Atomic writes a temp file and renames it over the destination without
	// any fsync. Readers never see a torn file, but after a power cut the
	// file may hold an older value, or (on some filesystems) be empty.
	Atomic
)

func (d Durability) String() string {
	switch d {
	case Durable:
		return "durable"
	case Atomic:
		return "atomic"
	}
	return "Durability(" + itoa(int(d)) + ")"
}

// keptCorrupt is how many moved-aside copies of a path's corrupt files
// are kept (see "Files on disk" in the package documentation). Chromium's
// JsonPrefStore keeps one, moving a file that does not parse to
// "<name>.bad" over the one before (json_pref_store.cc,
// HandleReadErrors); three distinct copies also keep the bytes of the two
// corruptions before the newest, often the ones that held what a person
// typed, at a cost of at most three times the file's size.
const keptCorrupt = 3

const (
	defaultPerm        fs.FileMode = 0o600
	defaultMaxParallel             = 4
	dirPerm            fs.FileMode = 0o700
)

func (o Options) perm() fs.FileMode {
	if o.Perm == 0 {
		return defaultPerm
	}
	return o.Perm
}

func (o Options) maxParallel() int {
	if o.MaxParallel <= 0 {
		return defaultMaxParallel
	}
	return o.MaxParallel
}
