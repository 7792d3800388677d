package statefile_test

// Case 1 of the reliability suite: a process saving as fast as it can is
// killed (SIGKILL; on Windows TerminateProcess) at random points; what it leaves on disk must be a
// whole value it saved, no older than the last one it reported flushed,
// with no temp files piling up across kills.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/statetest"
	"github.com/offmain/offmain/internal/wine"
	"github.com/offmain/offmain/statefile"
)

const (
	crashChildEnv = "OFFMAIN_CRASH_CHILD" // in the child: the state file to save to
	crashEveryEnv = "OFFMAIN_CRASH_EVERY" // in the child: flush after every this many saves
	crashSeedEnv  = "OFFMAIN_CRASH_SEED"  // replays the kill points of an earlier run
)

// crashValue is what the child saves. Pad is derived from N, so a file
// that mixed the bytes of two saves, or lost some, does not check out.
type crashValue struct {
	N   int    `json:"n"`
	Pad string `json:"pad"`
}

func newCrashValue(n int) crashValue {
	return crashValue{N: n, Pad: strings.Repeat(strconv.Itoa(n)+",", 4096/(len(strconv.Itoa(n))+1))}
}

// TestCrashKill is case 1. 200 kills by default, 2000 with OFFMAIN_LONG=1.
// Each kill comes after a random number (1 to 8) of flushed values was
// read from the child, which flushes after a random number (1 to 64) of
// saves: the kill lands anywhere in the save cycle, without a sleep.
func TestCrashKill(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, crashSeedEnv)
	}
	t.Logf("%s=%d", crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	path := filepath.Join(dir, "crash.json")
	trials := statetest.Size(200, 2000)
	if v := wine.Version(); v != "" {
		// Under Wine a child takes about half a second to start, sweep
		// and reach its kill: 25 kills take about 15 s.
		trials = 25
		t.Logf("Wine %s: %d kills", v, trials)
	}
	var prevTemps []string
	midWrite, flushed := 0, 0
	for trial := range trials {
		every := 1 + rng.IntN(64)
		run := runCrashChild(t, path, every, 1+rng.IntN(8))
		flushed += len(run.flushed)
		last := run.flushed[len(run.flushed)-1]

		data, err := os.ReadFile(path)
		require.NoError(t, err, "trial %d: the file exists after the kill", trial)
		var v crashValue
		require.NoError(t, json.Unmarshal(data, &v), "trial %d: the file parses: %.80q", trial, data)
		require.Equal(t, newCrashValue(v.N), v, "trial %d: the file holds one whole save", trial)
		require.GreaterOrEqual(t, v.N, last, "trial %d: got %d, want at least the last flushed value", trial, v.N)
		require.LessOrEqual(t, v.N, last+every, "trial %d: got %d, want a value the child saved (≤ %d)", trial, v.N, last+every)

		temps := statetest.TempNames(t, dir, "crash.json")
		require.LessOrEqual(t, len(temps), 1, "trial %d: temp files %v: want at most the one in flight", trial, temps)
		for _, old := range prevTemps {
			require.NotContains(t, temps, old, "trial %d: the previous kill's temp file was not swept", trial)
		}
		require.Empty(t, statetest.CorruptNames(t, dir, "crash.json"), "trial %d: the child found a corrupt file", trial)
		if len(temps) > 0 {
			midWrite++
		}
		prevTemps = temps
	}
	t.Logf("%d kills; %d caught a save between creating its temp file and renaming it; %d flushed values checked", trials, midWrite, flushed)

	// A last Open sweeps what the last kill left.
	s := statefile.NewStore(statefile.Options{})
	f, err := statefile.Open[crashValue](s, path)
	require.NoError(t, err)
	_, err = f.Load(context.Background())
	require.NoError(t, err)
	require.NoError(t, s.Close(context.Background()))
	assert.Equal(t, []string{"crash.json"}, statetest.DirEntries(t, dir), "only the state file is left")
}

// crashRun is what the parent read from one child.
type crashRun struct {
	start   int   // the value the child found on disk
	flushed []int // the values it reported flushed, in order
}

// runCrashChild starts a child saving to path, kills it once it has
// reported lines flushed values, and returns every value it reported
// (including those still in the pipe at the kill).
func runCrashChild(t *testing.T, path string, every, lines int) crashRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKill$", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashEveryEnv+"="+strconv.Itoa(every))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe() // the child exits when it closes: it never outlives the test
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	var run crashRun
	sc := bufio.NewScanner(stdout)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "start "); ok {
			run.start, err = strconv.Atoi(n)
		} else {
			var n int
			n, err = strconv.Atoi(line)
			run.flushed = append(run.flushed, n)
		}
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child wrote %q; stderr: %s", line, stderr.String())
		}
		if !killed && len(run.flushed) == lines {
			require.NoError(t, cmd.Process.Kill()) // SIGKILL; TerminateProcess on Windows
			killed = true
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "child: stderr: %s", stderr.String())
	require.True(t, killed && killedState(exit.ProcessState),
		"child ended with %v before the kill; stderr: %s", err, stderr.String())
	require.NotEmpty(t, run.flushed)
	require.Greater(t, run.flushed[0], run.start)
	return run
}

// crashChild saves 1, 2, 3... (counting on from what the file holds) as
// fast as it can, flushes after every crashEveryEnv saves and then prints
// the value just flushed, one write per line. It runs until killed.
func crashChild(path string) {
	go func() {
		io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end means the parent is gone
		os.Exit(3)
	}()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	every, err := strconv.Atoi(os.Getenv(crashEveryEnv))
	if err != nil || every < 1 {
		fail(fmt.Errorf("%s=%q", crashEveryEnv, os.Getenv(crashEveryEnv)))
	}
	s := statefile.NewStore(statefile.Options{}) // Durable, the default
	f, err := statefile.Open[crashValue](s, path)
	if err != nil {
		fail(err)
	}
	v, err := f.Load(context.Background()) // behind the sweep of the last kill's temp file
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fail(err)
	}
	fmt.Printf("start %d\n", v.N)
	for n := v.N + 1; ; n++ {
		if err := f.Save(newCrashValue(n)); err != nil {
			fail(err)
		}
		if (n-v.N)%every != 0 {
			continue
		}
		if err := f.Flush(context.Background()); err != nil {
			fail(err)
		}
		fmt.Printf("%d\n", n)
	}
}

// killedState reports whether ps is that of a process os.Process.Kill
// ended: by SIGKILL on Unix, by TerminateProcess with exit code 1 on
// Windows (os/exec_windows.go, Process.signal).
func killedState(ps *os.ProcessState) bool {
	if runtime.GOOS == "windows" {
		return ps.ExitCode() == 1
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
