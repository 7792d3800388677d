package anchors_test

import (
	"context"

	"github.com/offmain/offmain/anchors"
	"github.com/offmain/offmain/statefile"
)

// openLoad opens the store at path and waits for its file's first read,
// for tests that can wait: Open, then Load.
func openLoad(ctx context.Context, st *statefile.Store, path string, opts anchors.Options) (*anchors.Store, error) {
	s, err := anchors.Open(st, path, opts)
	if err != nil {
		return nil, err
	}
	return s, s.Load(ctx)
}
