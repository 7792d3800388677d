package drafts

import (
	"time"

	"github.com/offmain/offmain/internal/settle"
)

// Options configure a [Store]. The zero value means all defaults.
type Options struct {
	// Settle: a save is queued once edits pause this long.
	// Zero or negative: 300ms.
	Settle time.Duration

	// MaxWait: a save is queued no later than this after the first edit
	// not yet saved, so fast typing still saves. Zero or negative: 2s.
	MaxWait time.Duration

	// MaxAge, if positive, drops the drafts whose UpdatedAt is older than
	// this when the file is first read, and tells OnExpire which. Zero or
	// negative: a draft is kept until the app deletes it, however old. A
	// person's unsent text is never dropped by a default.
	MaxAge time.Duration

	// OnExpire, if set, is called once after the file's first read with
	// the drafts MaxAge dropped, by tab, so the app can tell the person or
	// keep them elsewhere. It runs on a goroutine of the Store, without its
	// lock: it may call the Store's methods. Nil, or no draft dropped: no
	// call.
	OnExpire func(expired map[string]Draft)

	// Watch makes the Store follow the file as other processes (a second
	// window of the app) save it, merging their drafts into this Store by
	// newest UpdatedAt per tab, and writing this Store's deletes as
	// tombstones so that they reach the others: see "Several windows" in
	// the package documentation. False: the file is read once, after Open.
	Watch bool

	// OnChange, if set, is called after a change saved by another process
	// has changed this Store's drafts, with the tabs whose draft was added,
	// replaced or deleted, sorted. It is never called for this Store's own
	// saves, nor for a change that leaves every draft as it was. It runs on
	// a goroutine of statefile, one call at a time, so hand the work to the
	// GUI's thread. It may call the Store's methods except Close, which
	// waits for it to return. A non-nil OnChange implies Watch. Nil: no
	// calls.
	OnChange func(tabs []string)
}

// watch reports whether the Store watches its file.
func (o Options) watch() bool { return o.Watch || o.OnChange != nil }

func (o Options) settle() settle.Options {
	return settle.Options{Settle: o.Settle, MaxWait: o.MaxWait}
}

// cutoff returns the oldest UpdatedAt a draft may have at now, and false
// when drafts never expire.
func (o Options) cutoff(now time.Time) (time.Time, bool) {
	if o.MaxAge <= 0 {
		return time.Time{}, false
	}
	return now.Add(-o.MaxAge), true
}
