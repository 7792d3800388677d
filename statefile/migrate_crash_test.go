package statefile

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	migrateChildEnv = "OFFMAIN_MIGRATE_CHILD" // in the child: the state file to migrate
	migrateStopEnv  = "OFFMAIN_MIGRATE_STOP"  // in the child: the point at which it waits to be killed
)

// A process migrating a file over three versions is killed (SIGKILL;
// TerminateProcess on Windows) at each point of the migration: inside each
// step, after the old file's copy is durable, and after the migrated file's
// rename. Whatever it leaves, the
// path holds the old file or the whole migrated one, and the next start
// ends with the migrated file alone.
func TestMigrateCrashKill(t *testing.T) {
	if path := os.Getenv(migrateChildEnv); path != "" {
		migrateChild(path, os.Getenv(migrateStopEnv))
		return
	}
	const old = `{"n":"a"}`
	for _, point := range []string{"step 1", "step 2", "step 3", "backup", "renamed"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "layout.json")
			require.NoError(t, os.WriteFile(path, []byte(old), 0o600))
			runMigrateChild(t, path, point)

			var migrated bool
			got := readFileT(t, path)
			if point == "renamed" {
				assert.JSONEq(t, `{"version":3,"titles":["a"]}`, got, "after the rename: the migrated file")
				migrated = true
			} else {
				assert.Equal(t, old, got, "before the rename: the old file, as it was")
			}
			if point == "backup" || point == "renamed" {
				assert.Equal(t, old, readFileT(t, path+".v0.bak"), "the old file's copy")
			}

			var ran []int
			s := NewStore(Options{})
			f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: layoutSteps(&ran)})
			require.NoError(t, err)
			v, err := f.Load(context.Background())
			require.NoError(t, err)
			require.NoError(t, s.Close(context.Background()))
			assert.Equal(t, layoutV3{Version: 3, Titles: []string{"a"}}, v)
			if migrated {
				assert.Empty(t, ran, "migrated again after the rename")
			} else {
				assert.Equal(t, []int{1, 2, 3}, ran, "steps on the restart")
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Equal(t, []string{"layout.json"}, names, "files left after the restart")
		})
	}
}

// runMigrateChild starts a child migrating path and kills it once it
// reports that it reached point.
func runMigrateChild(t *testing.T, path, point string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrateCrashKill$", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), migrateChildEnv+"="+path, migrateStopEnv+"="+point)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe() // the child exits when it closes: it never outlives the test
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	killed := false
	for sc.Scan() {
		if sc.Text() == point && !killed {
			require.NoError(t, cmd.Process.Kill())
			killed = true
		}
	}
	err = cmd.Wait()
	require.True(t, killed && killedState(cmd.ProcessState),
		"child ended with %v before reaching %q; stderr: %s", err, point, stderr.String())
}

// migrateChild migrates path, printing each point it passes, and waits at
// stop until the parent kills it (or closes its stdin).
func migrateChild(path, stop string) {
	at := func(point string) {
		fmt.Println(point)
		if point == stop {
			io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end means the parent is gone
			os.Exit(3)
		}
	}
	var ran []int
	steps := layoutSteps(&ran)
	for i := range steps {
		m := steps[i].Migrate
		steps[i].Migrate = func(data []byte) ([]byte, error) {
			at(fmt.Sprintf("step %d", steps[i].Version))
			return m(data)
		}
	}
	s := NewStore(Options{}) // Durable, the default
	commit := s.hooks.commit
	s.hooks.commit = func(p string, data []byte, tr *SaveTrace) error {
		err := commit(p, data, tr)
		switch {
		case strings.HasSuffix(p, ".bak") && data != nil:
			at("backup")
		case p == path:
			at("renamed")
		}
		return err
	}
	f, err := OpenWith(s, path, FileOptions[layoutV3]{Migrations: steps})
	if err == nil {
		_, err = f.Load(context.Background())
	}
	fmt.Fprintln(os.Stderr, "migrate child ended:", err)
	os.Exit(2)
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
