package flush_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/internal/childtest"
	"github.com/offmain/offmain/statefile"
)

// The process tests re-run this test binary as the child, selected by
// -test.run and guarded by these variables, as os/exec's tests do.
const (
	childEnv    = "OFFMAIN_FLUSH_CHILD" // "sigterm", "logout" or "nohup"
	childDirEnv = "OFFMAIN_FLUSH_DIR"   // where the child's state file goes
	lastSave    = 50
)

type payload struct {
	N   int    `json:"n"`
	Pad string `json:"pad"` // 1 MiB, so that the last write is still going when the signal comes
}

// TestChild is the child process of the tests below; run directly, it
// returns at once.
func TestChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	switch mode {
	case "":
		return
	case "logout":
		logoutChild(t)
		return
	case "nohup":
		nohupChild(t)
		return
	}
	st := statefile.NewStore(statefile.Options{})
	f, err := statefile.Open[payload](st, filepath.Join(os.Getenv(childDirEnv), "state.json"))
	require.NoError(t, err)
	hook := flush.New(flush.Options{Timeout: 10 * time.Second})
	hook.Add("state", st)
	hook.Notify()
	pad := strings.Repeat("x", 1<<20)
	for i := 1; i <= lastSave; i++ {
		require.NoError(t, f.Save(payload{N: i, Pad: pad}))
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent goes away
	os.Exit(3)
}

// TestQuitOnSIGTERM: a real process saves, gets SIGTERM, and exits with
// 128+15 only after its last save is on disk.
func TestQuitOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, "sigterm", nil, childDirEnv+"="+dir)
	require.NoError(t, c.Cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 143, c.Wait(t), "exit status; stderr:\n%s", c.ErrBuf)
	t.Logf("child: %s", c.ErrBuf)
	assert.Contains(t, c.ErrBuf.String(), "flush: terminated: saved 1/1 in ")

	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	var p payload
	require.NoError(t, json.Unmarshal(b, &p))
	assert.Equal(t, lastSave, p.N, "the file must hold the last save")
}

// startChild runs TestChild in mode (see childtest.Start).
func startChild(t *testing.T, mode string, wrapper []string, env ...string) *childtest.Child {
	t.Helper()
	return childtest.Start(t, childEnv, mode, wrapper, env...)
}
