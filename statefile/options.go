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

	// MaxParallel is the number of paths written at once across the Store.
	// Zero means 4. A path is only ever written by one writer at a time. It
	// is a soft limit: a writer inside one step (a save, a batch of Loads)
	// for over a second, as on a hung disk, stops counting, so the other
	// paths go on; at most MaxParallel more writers start that way, and
	// they end once no step is stuck.
	MaxParallel int

	// OnError, if set, is called on the writer goroutine for every save,
	// remove, Update or encode that failed, before it counts as done. A
	// retry of a failed op (see the package docs, "Failures and retries")
	// that fails with the same error text is not reported again; one that
	// fails differently is. It must not block for long: the path's next
	// save waits for it. It may call Save, Remove, Load and Flush of any
	// path: a Load of the same path reads the disk without waiting, a Flush
	// of it reports [ErrReentrant] (see [File.Load], [File.Flush]).
	OnError func(path string, err error)

	// OnRecovered, if set, is called on the writer goroutine when a save or
	// remove of path reaches the disk (or is found unchanged there) after
	// a failure of path was reported (to OnError or Logger, whether or not
	// they are set), with no success of path in between: the
	// path's newest state is on disk again, so a "not saved" warning the
	// app showed for it can go. It is called once per run of failures,
	// whether a retry or a newer save made it. The path counts as drained
	// by then: a Flush it calls reports the path drained. Like OnError it
	// must not block for long. Nil means nothing is called.
	OnRecovered func(path string)

	// Logger gets one Error record for each failure OnError gets, one Info
	// record when such a path is saved again, and the watch's warnings
	// (see [File.Watch]). Nil means [slog.Default], as it is when NewStore
	// is called, if OnError is nil too, and nothing otherwise (the rule of
	// the qos package's Options.Logger): with zero Options a disk-full or
	// permission error reaches the app's log when it happens, not only at
	// the next Flush, which may be at quit or never if the app crashes; an
	// app that handles failures in OnError does not get each twice. For
	// silence without OnError, say so: slog.New(slog.DiscardHandler).
	Logger *slog.Logger

	// MaxCorrupt is how many moved-aside copies ("<name>.corrupt-<time>")
	// of a path's corrupt files are kept, newest first: when a Load moves
	// one more aside, older ones beyond it are removed, as are copies
	// whose bytes a newer kept copy holds. The copy just moved is always
	// kept, and no bytes are removed unless a newer copy holds them or
	// MaxCorrupt newer, different ones are kept (see [ErrCorrupt]). Zero
	// means [DefaultMaxCorrupt]. Negative means all are kept.
	MaxCorrupt int

	// Trace, if set, is called on the writer goroutine with one [SaveTrace]
	// for every save or remove that ran, before it counts as done. Like
	// OnError it may call Load and Flush of any path: of its own path, Load
	// reads the disk without waiting and Flush reports [ErrReentrant]. Nil
	// means off, unless the environment variable OFFMAIN_TRACE names a CSV
	// file to append to.
	Trace func(SaveTrace)

	// Exclusive, if set, makes the Store the only writer of its paths
	// across processes: the first Open of a path takes an advisory lock on
	// "<name>.lock" (flock(2), LockFileEx), held until [Store.Close]; while
	// another Exclusive Store holds it, Open returns a [*LockedError]. A
	// dead holder's lock is free again. False (zero) means no lock. See
	// the package docs, "Several processes".
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

// DefaultMaxCorrupt is [Options.MaxCorrupt] when zero. Chromium's
// JsonPrefStore keeps one aside copy: it moves a file that does not parse
// to "<name>.bad", replacing the one before (json_pref_store.cc,
// HandleReadErrors). Three distinct copies also keep the bytes of the two
// corruptions before the newest (the older is more often the one that held
// what a person typed), at a cost of at most three times the file's size.
const DefaultMaxCorrupt = 3

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

func (o Options) maxCorrupt() int {
	if o.MaxCorrupt == 0 {
		return DefaultMaxCorrupt
	}
	return o.MaxCorrupt
}
