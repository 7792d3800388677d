package statefile_test

// Case 6 of the reliability suite: 64 goroutines make 1,000,000 saves to
// 10,000 paths in a real directory. Every file must end with its path's
// last value, the disk must see far fewer writes than saves, memory must
// stay bounded by one pending value per path (not per save), and no
// goroutine may remain.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/internal/wine"
	"github.com/offmain/offmain/statefile"
)

const (
	loadGoroutines = 64
	loadPaths      = 10_000
	loadSaves      = 1_000_000
	loadBodySize   = 1024 // bytes of each saved value's body, allocated afresh per save
	loadSamples    = 200  // heap samples taken during the saves
)

// loadValue is what the load test saves. Body is allocated for each save,
// so a Store that kept every save would hold loadSaves × loadBodySize.
type loadValue struct {
	Path int    `json:"path"`
	Seq  int    `json:"seq"` // 1, 2, 3... per path, in call order
	Body string `json:"body"`
}

// lastSave is the test's record of a path's newest save. mu orders the
// saves of one path among the goroutines, so "last" is well defined.
type lastSave struct {
	mu  sync.Mutex
	seq int
}

// loadCounts is what Options.Trace saw.
type loadCounts struct {
	writes, superseded, failed atomic.Int64
}

func (c *loadCounts) trace(tr statefile.SaveTrace) {
	c.superseded.Add(int64(tr.Superseded))
	if tr.Err != nil {
		c.failed.Add(1)
		return
	}
	c.writes.Add(1)
}

// TestLoadManyPaths is case 6. It saves with Atomic durability (temp file
// and rename, no fsync) so that it fits CI on 2 cores; OFFMAIN_LONG=1 runs
// it Durable, with every fsync.
func TestLoadManyPaths(t *testing.T) {
	durability := statefile.Atomic
	if statetest.Long() {
		durability = statefile.Durable
	}
	paths, saves := loadPaths, loadSaves
	if v := wine.Version(); v != "" {
		// Under Wine each file call is a round trip to wineserver: the
		// 10,000 paths' writes alone took 100 s to drain. A tenth of the
		// paths and saves keeps the ratios checked below.
		paths, saves = loadPaths/10, loadSaves/10
		t.Logf("Wine %s: %d paths, %d saves", v, paths, saves)
	}
	dir := t.TempDir()
	var counts loadCounts
	s := statefile.NewStore(statefile.Options{Durability: durability, Trace: counts.trace})
	files := make([]*statefile.File[loadValue], paths)
	for p := range files {
		var err error
		files[p], err = statefile.Open[loadValue](s, loadPath(dir, p))
		require.NoError(t, err)
	}
	require.NoError(t, s.Flush(context.Background())) // the first-Open sweeps
	last := make([]lastSave, paths)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		for old := peak.Load(); m.HeapAlloc > old && !peak.CompareAndSwap(old, m.HeapAlloc); old = peak.Load() {
		}
	}
	var done atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for g := range loadGoroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 0x5eed))
			for range saves / loadGoroutines {
				p := rng.IntN(paths)
				ls := &last[p]
				ls.mu.Lock()
				ls.seq++
				err := files[p].Save(loadValue{Path: p, Seq: ls.seq, Body: strings.Repeat("b", loadBodySize)})
				ls.mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if done.Add(1)%int64(saves/loadSamples) == 0 {
					sample()
				}
			}
		})
	}
	wg.Wait()
	sample()
	saving := time.Since(start)
	require.NoError(t, s.Close(context.Background()))
	took := time.Since(start)

	total := int64(loadGoroutines * (saves / loadGoroutines))
	writes, superseded := counts.writes.Load(), counts.superseded.Load()
	t.Logf("%s: %d saves to %d paths by %d goroutines in %v (%v until all saved, %v more to drain)",
		durability, total, paths, loadGoroutines, took.Round(time.Millisecond), saving.Round(time.Millisecond), (took - saving).Round(time.Millisecond))
	t.Logf("disk writes %d (%.1f%% of saves, %.0f saves per write); superseded %d", writes, 100*float64(writes)/float64(total), float64(total)/float64(writes), superseded)
	assert.Zero(t, counts.failed.Load(), "failed saves")
	assert.Equal(t, total, writes+superseded, "every save was either written or superseded, none lost or counted twice")
	assert.Less(t, writes, total/10, "got %d disk writes for %d saves: want far fewer", writes, total)

	growth := int64(peak.Load()) - int64(before.HeapAlloc)
	// One pending value per path, plus the one its writer encodes, plus
	// per-path bookkeeping (queue, File, map entry: well under 1 KiB);
	// doubled for the garbage GOGC=100 lets pile up between collections,
	// and doubled again as a margin. Keeping every save would be 8 times
	// more.
	perPath := int64(2*(loadBodySize+64) + 1024)
	bound := 4 * int64(paths) * perPath
	t.Logf("heap: %d MiB before, peak growth %d MiB; bound %d MiB (one pending value per path); keeping every save would take %d MiB",
		before.HeapAlloc>>20, growth>>20, bound>>20, int64(saves)*loadBodySize>>20)
	assert.Less(t, growth, bound, "heap grew by %d bytes: want less than %d", growth, bound)

	checkLoadFiles(t, dir, last)
	goleak.VerifyNone(t)
}

func loadPath(dir string, p int) string { return filepath.Join(dir, fmt.Sprintf("p%05d.json", p)) }

// checkLoadFiles checks that each path holds its last save and that
// nothing else is in dir.
func checkLoadFiles(t *testing.T, dir string, last []lastSave) {
	t.Helper()
	want := 0
	for p := range last {
		data, err := os.ReadFile(loadPath(dir, p))
		if last[p].seq == 0 {
			assert.True(t, errors.Is(err, fs.ErrNotExist), "path %d was never saved: got %v", p, err)
			continue
		}
		want++
		var v loadValue
		if !assert.NoError(t, err) || !assert.NoError(t, json.Unmarshal(data, &v)) {
			continue
		}
		if v.Path != p || v.Seq != last[p].seq || len(v.Body) != loadBodySize {
			t.Errorf("path %d: got path %d seq %d (body %d bytes), want seq %d", p, v.Path, v.Seq, len(v.Body), last[p].seq)
		}
	}
	assert.Len(t, statetest.DirEntries(t, dir), want, "only the state files are left: no temp files")
}
