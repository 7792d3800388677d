package drafts

import (
	"context"

	"github.com/offmain/offmain/statefile"
)

// openLoad opens the store at path and waits for its file's first read,
// for tests that can wait: Open, then Load.
func openLoad(ctx context.Context, st *statefile.Store, path string, opts Options) (*Store, error) {
	s, err := Open(st, path, opts)
	if err != nil {
		return nil, err
	}
	return s, s.Load(ctx)
}
