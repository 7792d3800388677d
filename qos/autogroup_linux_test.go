//go:build linux

package qos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAutogroupRateLimit runs Start for Setsid children as user nobody, for
// whom the kernel allows one autogroup write per HZ/10 (root is exempt), and
// checks that writes meeting EAGAIN are retried until they land.
func TestAutogroupRateLimit(t *testing.T) {
	cmd := nobodyHelperCmd(t, "TestAutogroupRateLimit", "autogroup-retry")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "helper output:\n%s", out)
	t.Logf("helper output:\n%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 5, "helper output:\n%s", out)
	for _, l := range lines[:3] {
		assert.Equal(t, "5 <nil>", l, "a Setsid child's autogroup nice: got %q, want 5", l)
	}
	assert.Equal(t, "8 <nil>", lines[3], "autogroup nice after three writes in a row: got %q, want 8", lines[3])
	assert.NotEqual(t, "retries 0", lines[4], "writes in a row should have met the rate limit:\n%s", out)
}

// nobodyHelperCmd returns a command that runs helper name as user nobody,
// for whom the kernel allows one autogroup write per HZ/10 (root is exempt).
func nobodyHelperCmd(t *testing.T, test, name string) *exec.Cmd {
	t.Helper()
	if b, err := os.ReadFile(autogroupSysctl); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skipf("%s is not 1 (%q, %v): the kernel makes no autogroups to correct", autogroupSysctl, b, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("running a helper as another user needs root")
	}
	// The test binary sits in a directory only root may enter: copy it where
	// user nobody can run it.
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	bin := filepath.Join(dir, "qos.test")
	b, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))

	cmd := helperCmd(test, name)
	cmd.Path, cmd.Args[0], cmd.Dir = bin, bin, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}

// TestStartKillsChildOnLateError checks the promise that when Start returns
// an error the command is not running, for an error that comes after the
// child started: the autogroup write of a Setsid child never landing. A
// write by root is exempt from the rate limit but moves the limit's window
// on (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice), so while
// this test, as root, rewrites the autogroup nice value of a Setsid child of
// its own without pause, every write of the helper, run as user nobody,
// meets EAGAIN. (A child's autogroup rather than the test's own: under a
// runner that never called setsid the test's is the default one, whose
// writes fail with EINVAL; they would still move the window, but a write
// that succeeds shows the test is doing what it means to.)
func TestStartKillsChildOnLateError(t *testing.T) {
	cmd := nobodyHelperCmd(t, "TestStartKillsChildOnLateError", "autogroup-exhausted")
	spin := exec.Command("/bin/sh", "-c", "read stop")
	spin.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := spin.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, spin.Start())
	t.Cleanup(func() { _ = in.Close(); _ = spin.Wait() })
	name, nice, err := autogroup(spin.Process.Pid)
	require.NoError(t, err)
	require.NotEqual(t, RootAutogroup, name, "a Setsid child gets an autogroup of its own")
	path := "/proc/" + strconv.Itoa(spin.Process.Pid) + "/autogroup"
	require.NoError(t, writeFile(path, strconv.Itoa(nice)), "root's write to a child's autogroup")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// The helper's write lands if no write of ours came in the 100 ms
	// before it, so ours must never pause that long, even with other test
	// binaries loading both CPUs: two writers, each on a thread of its own
	// at nice -20 (root may).
	// runLowered gives each a fresh thread, never the main one, and retires
	// it afterwards, as it does for lowered ones.
	for range 2 {
		wg.Go(func() {
			err := runLowered(func() (func() error, error) {
				return nil, unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), -20)
			}, func() error {
				for {
					select {
					case <-stop:
						return nil
					default:
						_ = writeFile(path, strconv.Itoa(nice))
					}
				}
			})
			assert.NoError(t, err, "raise the writer's priority")
		})
	}
	out, err := cmd.CombinedOutput()
	close(stop)
	wg.Wait()
	require.NoError(t, err, "helper output:\n%s", out)
	want := fmt.Sprintf("error wraps EAGAIN: true; child: signal: killed; retries %d\n", autogroupTries)
	assert.Equal(t, want, string(out), "helper output: got %q, want %q", out, want)
}

// TestParseAutogroup covers the forms /proc/<pid>/autogroup takes: a session
// autogroup, and nothing at all for the default autogroup (a process no
// setsid(2) ever moved, as under many CI runners and containers).
func TestParseAutogroup(t *testing.T) {
	tests := []struct {
		in      string
		name    string
		nice    int
		wantErr bool
	}{
		{"/autogroup-42 nice 5\n", "/autogroup-42", 5, false},
		{"/autogroup-7 nice -3\n", "/autogroup-7", -3, false},
		{"", RootAutogroup, 0, false},
		{"\n", RootAutogroup, 0, false},
		{"/autogroup-42 nice\n", "", 0, true},
		{"/autogroup-42 prio 5\n", "", 0, true},
		{"/autogroup-42 nice five\n", "", 0, true},
	}
	for _, tt := range tests {
		name, nice, err := parseAutogroup(tt.in)
		if tt.wantErr {
			assert.Error(t, err, "%q", tt.in)
			continue
		}
		assert.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.name, name, "%q", tt.in)
		assert.Equal(t, tt.nice, nice, "%q", tt.in)
	}
}
