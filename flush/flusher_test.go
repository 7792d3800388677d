package flush_test

import (
	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// The stores of this module are Flushers, and those of one file say which
// file they own: this fails to compile otherwise.
var (
	_ flush.Flusher       = (*statefile.Store)(nil)
	_ flush.ExceptFlusher = (*statefile.Store)(nil)
	_ flush.PathOwner     = (*statefile.File[int])(nil)
	_ flush.PathOwner     = (*drafts.Store)(nil)
	_ flush.PathOwner     = (*anchors.Store)(nil)
	_ flush.Flusher       = flush.Func(nil)
)
