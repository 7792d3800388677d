//go:build windows

package qos

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"

	"github.com/offmain/offmain/internal/wine"
)

func init() {
	helpers["wait-stdin"] = func() int { // lives until its stdin closes
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
}

// wineIgnoresClasses is why a child's priority class cannot be read back
// under Wine.
const wineIgnoresClasses = "Wine ignores priority classes passed as CreateProcess creation flags (its CreateProcessInternalW logs \"ignoring some flags\"): every child reads back NORMAL_PRIORITY_CLASS, with or without qos"

// Start asks CreateProcess for the tier's priority class through
// SysProcAttr.CreationFlags, keeps the caller's other flags, leaves the
// caller's SysProcAttr as it was, and the child reads the class back.
func TestStartCreationFlags(t *testing.T) {
	const newGroup = windows.CREATE_NEW_PROCESS_GROUP
	tests := []struct {
		name   string
		tier   Tier
		mode   Mode
		caller uint32 // the caller's CreationFlags
		want   uint32 // CreationFlags Start passes
	}{
		{"agent utility", Agent, ModeUtility, 0, windows.BELOW_NORMAL_PRIORITY_CLASS},
		{"agent background", Agent, ModeBackground, 0, windows.IDLE_PRIORITY_CLASS},
		{"background tier", Background, ModeUtility, 0, windows.IDLE_PRIORITY_CLASS},
		{"caller's flags kept, higher class lowered", Agent, ModeUtility, newGroup | windows.HIGH_PRIORITY_CLASS, newGroup | windows.BELOW_NORMAL_PRIORITY_CLASS},
		{"mode off", Agent, ModeOff, newGroup, newGroup},
		{"serving", Serving, ModeUtility, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperEnv+"=wait-stdin")
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			var callers *syscall.SysProcAttr
			if tt.caller != 0 {
				callers = &syscall.SysProcAttr{CreationFlags: tt.caller}
				cmd.SysProcAttr = callers
			}
			require.NoError(t, Start(cmd, tt.tier, tt.mode))
			t.Cleanup(func() { stdin.Close(); cmd.Wait() })
			var got uint32
			if cmd.SysProcAttr != nil {
				got = cmd.SysProcAttr.CreationFlags
			}
			assert.Equal(t, tt.want, got, "CreationFlags: got %#x, want %#x", got, tt.want)
			if callers != nil {
				assert.Equal(t, tt.caller, callers.CreationFlags, "the caller's SysProcAttr was changed")
			}
			t.Run("read back", func(t *testing.T) {
				want := classNames[tt.want&^newGroup]
				if want == "" {
					want = "NORMAL_PRIORITY_CLASS"
				} else {
					wine.Skip(t, wineIgnoresClasses)
				}
				a, err := Inspect(cmd.Process.Pid)
				require.NoError(t, err)
				assert.Equal(t, want, a.Policy, "the child's priority class")
			})
		})
	}
}

// Under Wine, Inspect still reads a child's class through OpenProcess and
// GetPriorityClass: NORMAL_PRIORITY_CLASS, whatever Start asked for.
func TestInspectWindows(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=wait-stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, Start(cmd, Agent, ModeOff))
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	a, err := Inspect(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, "NORMAL_PRIORITY_CLASS", a.Policy, "a child started with mode off")
}
