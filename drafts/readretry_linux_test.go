package drafts

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/keyedtest"
	"github.com/offmain/offmain/statefile"
)

var subject = keyedtest.Subject{
	Name: "drafts.json",
	Open: func(t *testing.T, st *statefile.Store, path string) keyedtest.Keyed {
		s, err := Open(st, path, Options{})
		require.NoError(t, err)
		return s
	},
	Set: func(s keyedtest.Keyed, key, value string) { s.(*Store).Set(key, value) },
	Get: func(s keyedtest.Keyed, key string) (string, bool) {
		d, ok := s.(*Store).Get(key)
		return d.Text, ok
	},
}

// TestReadRecoversIsDir: a directory where drafts.json goes (EISDIR), later
// replaced by the file: the drafts typed meanwhile are merged and saved.
func TestReadRecoversIsDir(t *testing.T) {
	keyedtest.ReadRecovers(t, subject, keyedtest.IsDir)
}

// TestReadRecoversNoAccess: drafts.json in a directory not readable at
// Open (EACCES), then readable: the drafts typed meanwhile are merged and
// saved. Root runs it as nobody.
func TestReadRecoversNoAccess(t *testing.T) {
	if !keyedtest.Unprivileged(t) {
		return
	}
	keyedtest.ReadRecovers(t, subject, keyedtest.NoAccess)
}
