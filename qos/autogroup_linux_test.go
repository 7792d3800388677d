//go:build linux

package qos

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAutogroupRateLimit runs Start for Setsid children as user nobody, for
// whom the kernel allows one autogroup write per HZ/10 (root is exempt), and
// checks that writes meeting EAGAIN are retried until they land.
func TestAutogroupRateLimit(t *testing.T) {
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

	cmd := helperCmd("TestAutogroupRateLimit", "autogroup-retry")
	cmd.Path, cmd.Args[0], cmd.Dir = bin, bin, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
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
