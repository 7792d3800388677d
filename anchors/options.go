package anchors

import (
	"time"

	"github.com/offmain/offmain/internal/settle"
)

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

	// Watch makes the Store follow the file as other processes (a second
	// window of the app) save it, merging their places into this Store by
	// newest UpdatedAt per chat, and writing this Store's Forgets as
	// tombstones so that they reach the others: see "Several windows" in
	// the package documentation. False: the file is read once.
	Watch bool

	// OnChange, if set, is called after a change saved by another process
	// has changed this Store's places, with the chats whose place was
	// added, replaced or dropped (forgotten or evicted), sorted. It is
	// never called for this Store's own saves, nor for a change that leaves
	// every place as it was. It runs on a goroutine of statefile, one call
	// at a time, so hand the work to the GUI's thread. It may call the
	// Store's methods except Close, which waits for it to return. A non-nil
	// OnChange implies Watch. Nil: no calls.
	OnChange func(chats []string)
}

// watch reports whether the Store watches its file.
func (o Options) watch() bool { return o.Watch || o.OnChange != nil }

func (o Options) max() int {
	if o.Max <= 0 {
		return defaultMax
	}
	return o.Max
}

func (o Options) settle() settle.Options {
	return settle.Options{Settle: o.Settle, MaxWait: o.MaxWait}
}

// defaultMax is how many places a Store keeps when Options.Max is zero:
// a chat list's worth, a few tens of KiB on disk.
const defaultMax = 500
