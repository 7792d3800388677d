package flush_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/drafts"
	"github.com/offmain/offmain/flush"
	"github.com/offmain/offmain/statefile"
)

// The session tests: what a desktop session sends an app. systemd-logind
// stops a session's processes with SIGTERM followed at once by SIGHUP
// (session scopes have SendSIGHUP=yes, systemd.kill(5)); `nohup app &`
// starts the app with SIGHUP ignored, so that closing the terminal leaves
// it running.

// logoutChild is the child of TestQuitOnLogout. Its drafts store holds an
// edit that only the quit flush saves (the settle is an hour), and a
// second flusher says "flushing" on stdout and holds the flush until the
// parent writes "go" on stdin.
func logoutChild(t *testing.T) {
	st := statefile.NewStore(statefile.Options{})
	d, err := drafts.Open(st, filepath.Join(os.Getenv(childDirEnv), "drafts.json"),
		drafts.Options{Settle: time.Hour, MaxWait: time.Hour})
	require.NoError(t, err)
	require.NoError(t, d.Load(t.Context()))
	release := make(chan struct{})
	hook := flush.New(flush.Options{Timeout: 20 * time.Second})
	hook.Add("state", st)
	hook.Add("drafts", d)
	hook.AddStop("agents", flush.Func(func(ctx context.Context) error {
		fmt.Println("flushing")
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	hook.Notify()
	// The test's own look at the SIGHUP: Notify notes it only with its
	// report, and os/signal hands a signal to every channel registered.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		<-hup
		fmt.Println("hangup seen")
	}()
	d.Set("chat", "typed just before the logout")
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "go" {
			close(release)
		}
	}
	os.Exit(3) // the parent went away
}

// TestQuitOnLogout: a real process gets SIGTERM, and SIGHUP while its
// flush is under way, as at a logout. The flush runs to its end: the
// process exits with 128+SIGTERM after the draft is on disk, and the
// report says every item drained.
func TestQuitOnLogout(t *testing.T) {
	dir := t.TempDir()
	c := startChild(t, "logout", nil, childDirEnv+"="+dir)
	require.NoError(t, c.Cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, "flushing", next(t, c.Stdout, "the flush to start"))
	require.NoError(t, c.Cmd.Process.Signal(syscall.SIGHUP))
	// The child has the SIGHUP before it is let go.
	require.Equal(t, "hangup seen", next(t, c.Stdout, "the child's word on the SIGHUP"))
	_, _ = fmt.Fprintln(c.Stdin, "go")

	code := c.Wait(t)
	t.Logf("child: %s", c.ErrBuf)
	assert.Equal(t, 143, code, "exit status: got, want 128+SIGTERM; stderr:\n%s", c.ErrBuf)
	assert.Contains(t, c.ErrBuf.String(), "flush: terminated: saved 2/2, stopped 1/1 in ")
	assert.NotContains(t, c.ErrBuf.String(), "without waiting for the disk")
	assert.Contains(t, c.ErrBuf.String(), "flush: hangup while quitting on terminated: went on to the end\n",
		"the SIGHUP noted with the report")

	st := statefile.NewStore(statefile.Options{})
	defer st.Close(context.Background())
	d, err := drafts.Open(st, filepath.Join(dir, "drafts.json"), drafts.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Load(t.Context()))
	got, _ := d.Get("chat")
	assert.Equal(t, "typed just before the logout", got.Text, "the draft the quit flush saved")
	require.NoError(t, d.Close(t.Context()))
}

// nohupChild is the child of TestNohupSurvivesHangup: it answers "pong"
// to each "ping" on stdin until a signal quits it.
func nohupChild(t *testing.T) {
	st := statefile.NewStore(statefile.Options{})
	f, err := statefile.Open[payload](st, filepath.Join(os.Getenv(childDirEnv), "state.json"))
	require.NoError(t, err)
	hook := flush.New(flush.Options{Timeout: 10 * time.Second})
	hook.Add("state", st)
	hook.Notify()
	require.NoError(t, f.Save(payload{N: 1}))
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "ping" {
			fmt.Println("pong")
		}
	}
	os.Exit(3)
}

// TestNohupSurvivesHangup: a process started under nohup(1), as `nohup app
// &` starts it, calls Notify, and a SIGHUP (its terminal closing) leaves it
// running; a SIGTERM then still quits it through the flush.
func TestNohupSurvivesHangup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	require.NoError(t, err, "nohup(1), from coreutils")
	dir := t.TempDir()
	c := startChild(t, "nohup", []string{nohup}, childDirEnv+"="+dir)
	require.NoError(t, c.Cmd.Process.Signal(syscall.SIGHUP))
	// An ignored signal is discarded when it is sent (kernel/signal.c,
	// prepare_signal and sig_ignored), so a reply after it proves the child
	// outlived it.
	_, _ = fmt.Fprintln(c.Stdin, "ping")
	assert.Equal(t, "pong", next(t, c.Stdout, "a pong after the SIGHUP"))
	require.NoError(t, c.Cmd.Process.Signal(syscall.SIGTERM))
	code := c.Wait(t)
	t.Logf("child: %s", c.ErrBuf)
	assert.Equal(t, 143, code, "exit status: got, want 128+SIGTERM; stderr:\n%s", c.ErrBuf)
	assert.Contains(t, c.ErrBuf.String(), "flush: terminated: saved 1/1 in ")
	assert.NotContains(t, c.ErrBuf.String(), "hangup")
}

// next returns the next line from lines, failing the test if none comes
// within a minute (a bound for a broken test only) or the child ended.
func next(t *testing.T, lines <-chan string, what string) string {
	t.Helper()
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("waiting for %s: the child ended", what)
		}
		return line
	case <-timer.C:
		t.Fatalf("waiting for %s: nothing within a minute", what)
		return ""
	}
}
