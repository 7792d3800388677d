//go:build windows

package qos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// Not run in this repository's CI: compiled for windows/amd64 and arm64
// only. They need a Windows with nested jobs (Windows 8 or later).

func init() {
	helpers["win-parent"] = winParentHelper
	helpers["win-wait"] = func() int { <-time.After(time.Hour); return 0 } // nothing of its parent's ends it
	helpers["win-app"] = winAppHelper
}

func winHelper(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	return cmd
}

// winParentHelper starts a child that waits an hour, prints the child's pid
// and waits for stdin to close.
func winParentHelper() int {
	child := winHelper("win-wait")
	if err := child.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println(child.Process.Pid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// winAppHelper starts a win-parent through a Group, prints the grandchild's
// pid and waits to be killed.
func winAppHelper() int {
	var g Group
	parent := winHelper("win-parent")
	out, _ := parent.StdoutPipe()
	_, _ = parent.StdinPipe()
	if err := g.Start(parent, Agent, ModeUtility); err != nil {
		fmt.Println(err)
		return 1
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	fmt.Print(line)
	select {}
}

// exitsWithinWin reports whether process pid exits within d.
func exitsWithinWin(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return true // gone already
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, uint32(d.Milliseconds()))
	require.NoError(t, err)
	return ev == windows.WAIT_OBJECT_0
}

func readPid(t *testing.T, r io.Reader) int {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err, "said %q", line)
	return pid
}

// TestGroupJobStop: Stop ends what the command started too.
func TestGroupJobStop(t *testing.T) {
	var g Group
	parent := winHelper("win-parent")
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	_, err = parent.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, g.Start(parent, Agent, ModeUtility))
	child := readPid(t, out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, g.Stop(ctx))
	_ = parent.Wait()
	assert.True(t, exitsWithinWin(t, child, time.Second), "the command's child must end with its job")
}

// TestGroupJobDiesWithApp: killing the app closes its job handles, and the
// system ends every process in those jobs.
func TestGroupJobDiesWithApp(t *testing.T) {
	app := winHelper("win-app")
	out, err := app.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, app.Start())
	t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
	grandchild := readPid(t, out)
	require.NoError(t, app.Process.Kill())
	_ = app.Wait()
	assert.True(t, exitsWithinWin(t, grandchild, time.Second), "the agent's child must end with the app")
}
