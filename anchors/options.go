package anchors

import (
	"time"

	"github.com/offmain/offmain/internal/settle"
)

// DefaultMax is the number of places a [Store] keeps when [Options.Max] is
// zero.
const DefaultMax = 500

// Options configure a [Store]. The zero value means all defaults.
type Options struct {
	// Max is how many chats' places are kept, in memory and on disk; when
	// one more is set, the least recently set is evicted.
	// Zero or negative: 500.
	Max int

	// Settle: a save is queued once Sets pause this long (a scroll has
	// stopped). Zero or negative: 300ms.
	Settle time.Duration

	// MaxWait: a save is queued no later than this after the first Set not
	// yet saved, so a long scroll still saves. Zero or negative: 2s.
	MaxWait time.Duration
}

func (o Options) max() int {
	if o.Max <= 0 {
		return DefaultMax
	}
	return o.Max
}

func (o Options) settle() settle.Options {
	return settle.Options{Settle: o.Settle, MaxWait: o.MaxWait}
}
