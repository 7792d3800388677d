package cuttest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/reliability/internal/powercut"
)

// PowerCut runs powercut.Torture over subject on a fresh powercut
// filesystem: 1,000 cuts (20,000 with OFFMAIN_LONG=1), a random seed that
// it logs (OFFMAIN_POWERCUT_SEED replays one), a removal every 16th save.
// It fails the test if any cut lost, aged or tore a value a Flush
// acknowledged (what names one in the message: "draft") or left a temp
// file behind.
func PowerCut(t *testing.T, subject powercut.Subject, what string) {
	t.Helper()
	cuts := 1000
	if os.Getenv("OFFMAIN_LONG") == "1" {
		cuts = 20000
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("OFFMAIN_POWERCUT_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "OFFMAIN_POWERCUT_SEED")
	}
	t.Logf("seed %d (replay with OFFMAIN_POWERCUT_SEED=%d)", seed, seed)
	fsys := powercut.MountT(t, powercut.Options{Seed: seed})
	c, err := powercut.Torture(fsys, fsys.Dir(), subject, powercut.Config{Cuts: cuts, Seed: seed, RemoveEvery: 16})
	require.NoError(t, err)
	t.Logf("POWERCUT cuts=%d acked=%d lost=%d older=%d torn=%d (leftovers=%d hangs=%d daemon-stalls=%d)",
		c.Cuts, c.Acked, c.Lost, c.Older, c.Torn, c.Leftovers, c.Hangs, c.DaemonStalls)
	for _, f := range c.Faults {
		t.Log(f)
	}
	assert.Equal(t, cuts, c.Cuts, "cuts: got/want")
	assert.Positive(t, c.Acked, "acknowledged flushes")
	assert.Zero(t, c.Lost+c.Older+c.Torn, "cuts that lost, aged or tore an acknowledged "+what)
	assert.Zero(t, c.Leftovers, "temp files left after the next Open")
	// A daemon stall (the writer blocked in a system call the FUSE
	// helper did not answer) is logged with its report above and is the
	// harness's, not the writer's: a few do not fail the test, more would
	// mean the harness no longer tests much.
	assert.Zero(t, c.Hangs, "cycles whose flushes or close hung")
	assert.LessOrEqual(t, c.DaemonStalls, 2, "cycles in which the FUSE helper did not answer the writer")
}

// Leftover returns a powercut.Subject's Leftover for the file named name:
// it tells renameio's temp files (".<name><digits>") from anything else.
func Leftover(name string) func(string) bool {
	return func(entry string) bool {
		digits, ok := strings.CutPrefix(entry, "."+name)
		return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
	}
}
