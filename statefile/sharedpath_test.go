package statefile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedEnv names the state file the child processes of
// TestSharedPathProcesses save, load and sweep together.
const sharedEnv = "OFFMAIN_TEST_SHARED_PATH"

const (
	sharedProcs  = 3  // child processes
	sharedRounds = 15 // Stores each child opens in turn: each first Open sweeps
	sharedSaves  = 10 // Durable saves per Store, each flushed
)

// sharedCounts is what a child reports on its last line of output.
type sharedCounts struct {
	Saves, FailedSaves, Loads, FailedLoads int
	FirstErr                               string
}

// sharedChild saves, loads and sweeps path in a loop, beside its siblings,
// with a second goroutine loading it through Stores of its own.
func sharedChild(path string, id int) {
	var (
		mu sync.Mutex
		c  sharedCounts
	)
	note := func(failed *int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			*failed++
			if c.FirstErr == "" {
				c.FirstErr = err.Error()
			}
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // a reader, as a second window of the app would be: a Load every 2 ms
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			f, err := Open[int](NewStore(Options{}), path)
			if err == nil {
				_, err = f.Load(context.Background())
			}
			mu.Lock()
			c.Loads++
			mu.Unlock()
			note(&c.FailedLoads, err)
		}
	})
	for r := range sharedRounds {
		s := NewStore(Options{Durability: Durable})
		f, err := Open[int](s, path) // its first Open sweeps while the siblings save
		note(&c.FailedSaves, err)
		for i := range sharedSaves {
			if err == nil {
				f.Save(id*1_000_000 + r*1000 + i)
				err = f.Flush(context.Background())
				mu.Lock()
				c.Saves++
				mu.Unlock()
				note(&c.FailedSaves, err)
			}
		}
		s.Close(context.Background())
	}
	close(done)
	wg.Wait()
	out, _ := json.Marshal(c)
	fmt.Printf("\n%s\n", out)
	os.Exit(0)
}

// Processes that share a state file: each saves it Durable over and over,
// opens it in new Stores (whose first Opens sweep its directory while the
// others save), and loads it the whole time from another goroutine. No
// save and no load may fail, and the file is always one whole save. On
// Windows this found saves failing with "File not found" (a sweep deleted
// a temp file between its writer's close and its MoveFileEx) and loads
// failing with sharing violations (os.ReadFile during another process's
// move).
func TestSharedPathProcesses(t *testing.T) {
	if path := os.Getenv(sharedEnv); path != "" {
		id, _ := strconv.Atoi(os.Getenv(sharedEnv + "_ID"))
		sharedChild(path, id)
	}
	path := filepath.Join(t.TempDir(), "shared.json")
	require.NoError(t, os.WriteFile(path, []byte("0\n"), 0o600))
	var wg sync.WaitGroup
	results := make([]sharedCounts, sharedProcs)
	for p := range sharedProcs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedPathProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), sharedEnv+"="+path, sharedEnv+"_ID="+strconv.Itoa(p+1))
		wg.Go(func() {
			out, err := cmd.Output()
			if !assert.NoError(t, err, "child %d", p) {
				return
			}
			lines := splitLines(out)
			assert.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &results[p]), "child %d's counts: %s", p, out)
		})
	}
	wg.Wait()
	for p, c := range results {
		t.Logf("child %d: %d saves (%d failed), %d loads (%d failed) %s", p, c.Saves, c.FailedSaves, c.Loads, c.FailedLoads, c.FirstErr)
		assert.Equal(t, sharedRounds*sharedSaves, c.Saves, "child %d: saves made", p)
		assert.Zero(t, c.FailedSaves, "child %d: failed saves; first error: %s", p, c.FirstErr)
		assert.Zero(t, c.FailedLoads, "child %d: failed loads; first error: %s", p, c.FirstErr)
		assert.Positive(t, c.Loads, "child %d: loads made", p)
	}
	var last int
	require.NoError(t, json.Unmarshal([]byte(readFileT(t, path)), &last), "the file after all saves")
	assert.Equal(t, []string{"shared.json"}, dirNames(t, filepath.Dir(path)), "no temp file left")
}

func splitLines(b []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}
