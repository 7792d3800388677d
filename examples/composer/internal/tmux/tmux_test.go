package tmux

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunTypeAndExit runs cat in a pane: typed text echoes on the screen,
// ctrl+d ends it, and WaitExit reports its status without polling.
func TestRunTypeAndExit(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(dir, 60, 10, []string{"GREETING=hello"}, []string{"sh", "-c", `echo "$GREETING"; cat; exit 7`})
	if errors.Is(err, ErrNotInstalled) {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = s.WaitScreen(ctx, "hello", 10*time.Millisecond)
	require.NoError(t, err, "env reached the program")
	pid, err := s.ProgramPID()
	require.NoError(t, err)
	assert.Positive(t, pid)
	require.NoError(t, s.SendText("typed here"))
	_, err = s.WaitScreen(ctx, "typed here", 10*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, s.SendKeys("Enter", "C-d"))
	status, screen, err := s.WaitExit(ctx)
	require.NoError(t, err)
	assert.Equal(t, 7, status, "screen:\n%s", screen)
	require.NoError(t, s.Close())
	left, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.Empty(t, left, "Close removed the socket and the configuration")
	_, err = os.Stat(filepath.Join(dir, "tmux.sock"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}
