package flush_test

import (
	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// The stores of this module are Flushers: this fails to compile otherwise.
var (
	_ flush.Flusher = (*statefile.Store)(nil)
	_ flush.Flusher = (*statefile.File[int])(nil)
	_ flush.Flusher = (*drafts.Store)(nil)
	_ flush.Flusher = (*anchors.Store)(nil)
	_ flush.Flusher = flush.Func(nil)
)
