package statefile_test

// Failed saves are retried: a real tmpfs is filled until a save fails with
// ENOSPC, then freed. Flush (and a second Flush) tell the truth at each
// step, the quit flush lands what the freed disk takes, the backoff timer
// lands it without any Flush, and the errors name the state file, not its
// temp file.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/statefile"
)

// recoveredWithin bounds the wait for the backoff timer's retry (due 2 s
// after the second failure) on a loaded machine.
const recoveredWithin = 30 * time.Second

func TestFullDiskRetry(t *testing.T) {
	value := strings.Repeat("z", 16<<10)
	for _, tc := range []struct {
		name  string
		flush bool // free the disk and Flush; else wait for the timer
	}{
		{"quit flush after freeing", true},
		{"backoff timer after freeing", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tmpmount.Tmpfs(t, "64k")
			log := statetest.NewErrorLog()
			recovered := make(chan string, 4)
			s := statefile.NewStore(statefile.Options{OnError: log.OnError, OnRecovered: func(p string) { recovered <- p }})
			t.Cleanup(func() { s.Close(context.Background()) }) //nolint:errcheck // checked below
			f, err := statefile.Open[string](s, filepath.Join(dir, "state.json"))
			require.NoError(t, err)
			filler := fill(t, dir)
			require.NoError(t, f.Save(value))
			for i := range 2 {
				err := s.Flush(context.Background())
				var nd *statefile.NotDrainedError
				require.ErrorAs(t, err, &nd, "Flush %d on a full disk: got %v", i, err)
				assert.ErrorIs(t, nd.Failed[f.Path()], syscall.ENOSPC, "Flush %d: got %v", i, nd.Failed)
				expectNamesPath(t, nd.Failed[f.Path()], f.Path())
				t.Logf("Flush %d: %v", i, err)
			}
			got := log.Drain()
			require.Len(t, got, 1, "OnError calls: the save and two retries failing alike")
			expectNamesPath(t, got[0].Err, f.Path())
			assert.NoFileExists(t, f.Path())
			assert.Empty(t, statetest.TempNames(t, dir, "state.json"), "temp files left")

			require.NoError(t, os.Remove(filler))
			if tc.flush {
				require.NoError(t, s.Flush(context.Background()), "the quit flush on the freed disk")
				require.NoError(t, s.Flush(context.Background()), "and a second")
			}
			select {
			case p := <-recovered:
				assert.Equal(t, f.Path(), p, "OnRecovered's path")
			case <-time.After(recoveredWithin):
				t.Fatalf("no OnRecovered within %v of freeing the disk", recoveredWithin)
			}
			var saved string
			require.NoError(t, json.Unmarshal(statetest.ReadBytes(t, f.Path()), &saved))
			assert.Equal(t, value, saved, "the file holds the save that failed")
			assert.NoError(t, s.Flush(context.Background()), "Flush once it landed")
			assert.Empty(t, log.Drain(), "OnError calls after the disk was freed")
		})
	}
}

// tempName is the shape of a temp file's name, which an error must not
// show in place of the state file's.
var tempName = regexp.MustCompile(`\.state\.json\d+`)

// expectNamesPath checks that err's text names path and no temp file.
func expectNamesPath(t *testing.T, err error, path string) {
	t.Helper()
	if !assert.Error(t, err) {
		return
	}
	assert.Contains(t, err.Error(), path, "the error names the state file")
	assert.NotRegexp(t, tempName, err.Error(), "the error names the temp file")
}
