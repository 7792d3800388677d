package drafts_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/statefile"
)

// TestNewerFileAfterOpenNeverSavedOver: a file a newer release writes
// after the Store has read and saved its own (a second window after an
// auto-update, a sync tool) is never saved over, by the next edit's save,
// by Flush, by Close, or by a watch that would merge it: every Flush says
// the edit was not saved, and the file keeps every byte.
func TestNewerFileAfterOpenNeverSavedOver(t *testing.T) {
	for _, watch := range []bool{false, true} {
		name := "no watch"
		if watch {
			name = "watch"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "drafts.json")
			st := statefile.NewStore(statefile.Options{Logger: slog.New(slog.DiscardHandler)})
			t.Cleanup(func() { st.Close(context.Background()) }) //nolint:errcheck // it reports the newer file
			changed := make(chan []string, 8)
			opts := drafts.Options{}
			if watch {
				opts.OnChange = func(tabs []string) { changed <- tabs }
			}
			d, err := openLoad(t.Context(), st, path, opts)
			require.NoError(t, err)
			d.Set("a", "saved before the newer release came")
			require.NoError(t, d.Flush(t.Context()))

			newer := []byte(`{"version":2,"drafts":{"theirs":{"text":"hi","updated_at":"2026-01-01T00:00:00Z"}},"future":true}`)
			replaceFile(t, path, newer)
			if watch {
				awaitWatch(t, path) // this Store's watch had the same events to act on
			}
			d.Set("b", "typed after")
			for i := range 2 {
				err := d.Flush(t.Context())
				assert.ErrorIs(t, err, statefile.ErrNewerVersion, "Flush %d: got %v", i, err)
			}
			assert.ErrorIs(t, d.Close(t.Context()), statefile.ErrNewerVersion, "Close")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(newer), string(got), "the newer file: got %s, want it untouched", got)
			_, ok := d.Get("theirs")
			assert.False(t, ok, "the newer file's draft, merged as if this release's format")
			select {
			case tabs := <-changed:
				t.Errorf("OnChange(%v) for a file this release cannot read", tabs)
			default:
			}
		})
	}
}

// replaceFile replaces path as another program's save does.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".other"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// awaitWatch waits until a watch of path in a Store of its own reports
// the file as it is: a watch that started earlier has had the same events,
// settled the same way.
func awaitWatch(t *testing.T, path string) {
	t.Helper()
	st := statefile.NewStore(statefile.Options{})
	defer st.Close(context.Background()) //nolint:errcheck // nothing saved
	f, err := statefile.Open[json.RawMessage](st, path)
	require.NoError(t, err)
	seen := make(chan struct{}, 1)
	stop, err := f.Watch(func(json.RawMessage, error) {
		select {
		case seen <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	defer stop()
	replaceFile(t, path, readAll(t, path)) // one more event, for this watch too
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no watch report within 10 s")
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
