package statefile_test

// Power cuts: saves through a FUSE filesystem that forgets what was not
// made durable (internal/powercut), cut at random points; what a Flush
// acknowledged must be there after each cut. See RELIABILITY.md, "Power
// cuts".

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/powercut"
	"github.com/offmain/offmain/statefile"
)

// pcValue is what the power-cut tests save. Pad is derived from N, so a
// file that mixes two saves' bytes does not check out even if it parses.
type pcValue struct {
	N   int    `json:"n"`
	Pad string `json:"pad"`
}

func newPCValue(n int) pcValue {
	return pcValue{N: n, Pad: strings.Repeat(strconv.Itoa(n)+",", 512/(len(strconv.Itoa(n))+1))}
}

func (v pcValue) whole() bool { return v.N > 0 && v == newPCValue(v.N) }

const pcName = "state.json"

// isTemp reports whether name is a temp file of a save of pcName
// (renameio's ".<name><digits>").
func isTemp(name string) bool {
	digits, ok := strings.CutPrefix(name, "."+pcName)
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// storeWriter saves through a statefile.Store.
type storeWriter struct {
	st *statefile.Store
	f  *statefile.File[pcValue]
}

func (w *storeWriter) Save(v int) error {
	if v == 0 {
		return w.f.Remove()
	}
	return w.f.Save(newPCValue(v))
}

func (w *storeWriter) Flush(ctx context.Context) error { return w.f.Flush(ctx) }
func (w *storeWriter) Close(ctx context.Context) error { return w.st.Close(ctx) }

// storeSubject opens a fresh Store with opts in each power cycle, as an
// app does at start, and reads the file with Load.
func storeSubject(opts statefile.Options) powercut.Subject {
	return powercut.Subject{
		Open: func(dir string) (powercut.Writer, int, error) {
			st := statefile.NewStore(opts)
			f, err := statefile.Open[pcValue](st, filepath.Join(dir, pcName))
			if err != nil {
				return nil, 0, err
			}
			w := &storeWriter{st: st, f: f}
			v, err := f.Load(context.Background())
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return w, 0, nil
			case errors.Is(err, statefile.ErrCorrupt):
				// Counted; the copy moved aside goes, or every later cut
				// would rewrite them all.
				if ce := (*statefile.CorruptError)(nil); errors.As(err, &ce) && ce.Aside != "" {
					os.Remove(ce.Aside)
				}
				return w, 0, fmt.Errorf("%w: %w", powercut.ErrTorn, err)
			case err != nil:
				return nil, 0, errors.Join(err, st.Close(context.Background()))
			case !v.whole():
				return w, 0, fmt.Errorf("%w: %+v", powercut.ErrTorn, v)
			}
			return w, v.N, nil
		},
		Leftover: isTemp,
	}
}

// powerCuts is how many cuts a torture makes: 1,000, or 20,000 with
// OFFMAIN_LONG=1.
func powerCuts() int {
	if os.Getenv("OFFMAIN_LONG") == "1" {
		return 20000
	}
	return 1000
}

// pcSeed returns a seed for a torture, from OFFMAIN_POWERCUT_SEED to
// replay one, and logs it.
func pcSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("OFFMAIN_POWERCUT_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "OFFMAIN_POWERCUT_SEED")
	}
	t.Logf("seed %d (replay with OFFMAIN_POWERCUT_SEED=%d)", seed, seed)
	return seed
}

// TestPowerCut saves and removes through a Durable Store, flushes at
// random and cuts the power at a random operation, 1,000 times (20,000
// with OFFMAIN_LONG=1). After each cut a fresh Store must read a value
// saved at or after the last one a Flush acknowledged (or no file, if
// that was a remove), whole, with no temp file left after its Open.
func TestPowerCut(t *testing.T) {
	seed := pcSeed(t)
	fsys := powercut.MountT(t, powercut.Options{Seed: seed})
	c, err := powercut.Torture(fsys, fsys.Dir(), storeSubject(statefile.Options{}),
		powercut.Config{Cuts: powerCuts(), Seed: seed, RemoveEvery: 16})
	require.NoError(t, err)
	t.Logf("POWERCUT cuts=%d acked=%d lost=%d older=%d torn=%d (leftovers=%d hangs=%d daemon-stalls=%d)",
		c.Cuts, c.Acked, c.Lost, c.Older, c.Torn, c.Leftovers, c.Hangs, c.DaemonStalls)
	for _, f := range c.Faults {
		t.Log(f)
	}
	assert.Equal(t, powerCuts(), c.Cuts, "cuts: got/want")
	assert.Positive(t, c.Acked, "acknowledged flushes")
	assert.Zero(t, c.Lost, "cuts that lost an acknowledged file")
	assert.Zero(t, c.Older, "cuts that left a value older than the acknowledged one")
	assert.Zero(t, c.Torn, "cuts that left a torn file")
	assert.Zero(t, c.Leftovers, "temp files left after the next Open")
	// A daemon stall (the writer blocked in a system call the FUSE
	// helper did not answer) is logged with its report above and is the
	// harness's, not the writer's: a few do not fail the test, more would
	// mean the harness no longer tests much.
	assert.Zero(t, c.Hangs, "cycles whose flushes or close hung")
	assert.LessOrEqual(t, c.DaemonStalls, 2, "cycles in which the FUSE helper did not answer the writer")
}

// TestPowerCutNewDirectory saves into a directory the Store has to make,
// two levels deep, and cuts the power at a random operation of that first
// save; if its Flush returned nil, the file must be there after the cut:
// each new directory's entry in its parent must be durable too.
func TestPowerCutNewDirectory(t *testing.T) {
	seed := pcSeed(t)
	fsys := powercut.MountT(t, powercut.Options{Seed: seed})
	n := powerCuts() / 5
	acked := 0
	for i := range n {
		top := filepath.Join(fsys.Dir(), "d")
		require.NoError(t, os.RemoveAll(top)) // what the last cut kept
		require.NoError(t, syncDirPC(fsys.Dir()))
		path := filepath.Join(top, "sub", pcName)
		done := fsys.Arm(powercut.Trigger{N: 1 + int((seed+uint64(i))%12)})
		st := statefile.NewStore(statefile.Options{})
		f, err := statefile.Open[pcValue](st, path)
		require.NoError(t, err)
		require.NoError(t, f.Save(newPCValue(1)))
		ok := f.Flush(context.Background()) == nil
		fsys.Cut() // if the trigger has not cut yet
		<-done
		_ = st.Close(context.Background()) // fails: the power is off
		require.NoError(t, fsys.PowerOn())
		if !ok {
			continue
		}
		acked++
		st = statefile.NewStore(statefile.Options{})
		f, err = statefile.Open[pcValue](st, path)
		require.NoError(t, err)
		v, err := f.Load(context.Background())
		if assert.NoError(t, err, "cut %d: load after an acknowledged save", i) {
			assert.Equal(t, newPCValue(1), v, "cut %d: got/want", i)
		}
		require.NoError(t, st.Close(context.Background()))
	}
	t.Logf("%d cuts, %d acknowledged saves into a new directory checked", n, acked)
	assert.Positive(t, acked, "acknowledged saves")
}

// syncDirPC fsyncs a directory.
func syncDirPC(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
