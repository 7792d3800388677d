package drafts

import (
	"time"

	"github.com/offmain/offmain/internal/settle"
)

// DefaultMaxAge is how old a draft may get before [Open] drops it, when
// [Options.MaxAge] is zero.
const DefaultMaxAge = 30 * 24 * time.Hour

// Options configure a [Store]. The zero value means all defaults.
type Options struct {
	// Settle: a save is queued once edits pause this long.
	// Zero or negative: 300ms.
	Settle time.Duration

	// MaxWait: a save is queued no later than this after the first edit
	// not yet saved, so fast typing still saves. Zero or negative: 2s.
	MaxWait time.Duration

	// MaxAge: drafts whose UpdatedAt is older than this are dropped when
	// the store opens. Zero: 30 days. Negative: drafts never expire.
	MaxAge time.Duration
}

func (o Options) settle() settle.Options {
	return settle.Options{Settle: o.Settle, MaxWait: o.MaxWait}
}

// cutoff returns the oldest UpdatedAt a draft may have at now, and false
// when drafts never expire.
func (o Options) cutoff(now time.Time) (time.Time, bool) {
	switch {
	case o.MaxAge < 0:
		return time.Time{}, false
	case o.MaxAge == 0:
		return now.Add(-DefaultMaxAge), true
	default:
		return now.Add(-o.MaxAge), true
	}
}
