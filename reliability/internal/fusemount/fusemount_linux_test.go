package fusemount_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/offmain/offmain/internal/mountinfo"
	"github.com/offmain/offmain/reliability/internal/fusemount"
)

// mounted reports whether the last mount at dir is a FUSE filesystem
// named name (type "fuse.<name>" in /proc/self/mountinfo, proc(5)).
func mounted(t *testing.T, dir, name string) bool {
	t.Helper()
	ms, err := mountinfo.Read()
	require.NoError(t, err)
	top, ok := mountinfo.Top(ms, dir)
	return ok && top.FSType == "fuse."+name
}

// The loopback is served by another process: this one holds no /dev/fuse
// descriptor, the helper does, and what is written through the mount
// lands in the backing directory.
func TestLoopback(t *testing.T) {
	lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
	assert.True(t, mounted(t, lb.Dir(), "loopback"), "%s: want a fuse.loopback mount", lb.Dir())
	assert.NotEqual(t, os.Getpid(), lb.Pid(), "the helper's pid")
	self, err := fusemount.ServesFUSE(os.Getpid())
	require.NoError(t, err)
	assert.False(t, self, "this process holds a /dev/fuse descriptor: it would serve the mount it uses")
	helper, err := fusemount.ServesFUSE(lb.Pid())
	require.NoError(t, err)
	assert.True(t, helper, "the helper holds no /dev/fuse descriptor")

	p := filepath.Join(lb.Dir(), "sub", "a.json")
	require.NoError(t, os.Mkdir(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte("hello"), 0o600))
	b, err := os.ReadFile(filepath.Join(lb.Backing(), "sub", "a.json"))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b), "the backing file: got/want")
	assert.Contains(t, lb.Stacks(), "goroutine ", "the helper's stacks")
}

// replaceBehind replaces name in dir by a file of the same size with other
// bytes and an mtime an hour later, by a temp file and rename(2), as
// another client of a network filesystem or a sync tool would.
func replaceBehind(t *testing.T, dir, name, data string, mtime time.Time) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(data), 0o600))
	require.NoError(t, os.Chtimes(tmp, mtime, mtime))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
}

// With go-fuse's usual timeouts, a replacement made in the backing
// directory is invisible to lstat(2) through the mount until the 1 s
// attribute timeout passes, or until the file is read through the mount;
// a read gets the new bytes. With the caches off it shows at once.
func TestLoopbackAttributeCache(t *testing.T) {
	// stale replaces the file behind the mount's back and checks that
	// lstat still shows the old one. The window is a second of real time:
	// on a loaded machine the steps may take longer, so a try that took
	// over half of it is made again. It returns the new mtime and when
	// the first lstat was made.
	stale := func(t *testing.T, lb *fusemount.Process, p string) (time.Time, time.Time) {
		for try := 0; ; try++ {
			require.NoError(t, os.WriteFile(p, []byte(`{"n":1}`), 0o600))
			start := time.Now()
			before, err := os.Lstat(p)
			require.NoError(t, err)
			later := before.ModTime().Add(time.Hour)
			replaceBehind(t, lb.Backing(), "state.json", `{"n":2}`, later)
			after, err := os.Lstat(p)
			require.NoError(t, err)
			if took := time.Since(start); took > 500*time.Millisecond && try < 5 {
				t.Logf("try %d took %v, over half the attribute timeout: again", try, took)
				continue
			}
			assert.Equal(t, before.ModTime(), after.ModTime(), "lstat through the mount within the timeout: got the new mtime, want the cached one")
			assert.Equal(t, before.Sys().(*syscall.Stat_t).Ino, after.Sys().(*syscall.Stat_t).Ino, "inode within the timeout")
			return later, start
		}
	}
	t.Run("until the timeout", func(t *testing.T) {
		lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
		p := filepath.Join(lb.Dir(), "state.json")
		later, start := stale(t, lb, p)
		// Polled, not slept: the kernel asks the helper again once the
		// timeout has passed.
		deadline := time.Now().Add(10 * time.Second)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			st, err := os.Lstat(p)
			require.NoError(t, err)
			if st.ModTime().Equal(later) {
				waited := time.Since(start)
				t.Logf("the new mtime showed %v after the first lstat", waited)
				assert.GreaterOrEqual(t, waited, 900*time.Millisecond, "the new mtime showed before the 1 s timeout")
				break
			}
			require.True(t, time.Now().Before(deadline), "lstat still showed the old mtime after 10 s")
			<-tick.C
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, `{"n":2}`, string(b), "a read through the mount: got/want")
	})
	t.Run("until a read", func(t *testing.T) {
		lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
		p := filepath.Join(lb.Dir(), "state.json")
		later, _ := stale(t, lb, p)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, `{"n":2}`, string(b), "a read through the mount within the timeout: got/want")
		st, err := os.Lstat(p)
		require.NoError(t, err)
		assert.Equal(t, later, st.ModTime(), "lstat after a read: got/want")
	})
	t.Run("uncached", func(t *testing.T) {
		lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{EntryTimeout: -1, AttrTimeout: -1})
		p := filepath.Join(lb.Dir(), "state.json")
		require.NoError(t, os.WriteFile(p, []byte(`{"n":1}`), 0o600))
		before, err := os.Lstat(p)
		require.NoError(t, err)
		later := before.ModTime().Add(time.Hour)
		replaceBehind(t, lb.Backing(), "state.json", `{"n":2}`, later)
		after, err := os.Lstat(p)
		require.NoError(t, err)
		assert.Equal(t, later, after.ModTime(), "lstat with the caches off: got/want")
	})
}

// A descriptor left open makes the unmount busy: the connection is
// aborted, the mount detached, and the error says so.
func TestUnmountBusy(t *testing.T) {
	backing, dir := t.TempDir(), t.TempDir()
	lb := loopback(t, dir, backing)
	f, err := os.Create(filepath.Join(dir, "open"))
	require.NoError(t, err)
	defer f.Close()

	uerr := lb.Unmount()
	assert.ErrorIs(t, uerr, syscall.EBUSY, "unmount with a descriptor open")
	assert.Contains(t, uerr.Error(), "loopback: unmount "+dir)
	assert.False(t, mounted(t, dir, "loopback"), "%s: still mounted after Unmount", dir)
	_, err = f.WriteString("x")
	assert.ErrorIs(t, err, syscall.ENOTCONN, "write to a descriptor of the aborted mount")
	assert.Equal(t, uerr, lb.Unmount(), "a second Unmount returns the same")
	assertExited(t, lb.Pid())
}

// A helper that dies leaves a dead mount (ENOTCONN); Unmount detaches it
// from this process and says the helper exited.
func TestHelperKilled(t *testing.T) {
	backing, dir := t.TempDir(), t.TempDir()
	lb := loopback(t, dir, backing)
	f, err := os.Create(filepath.Join(dir, "open"))
	require.NoError(t, err)
	defer f.Close()

	require.NoError(t, syscall.Kill(lb.Pid(), syscall.SIGKILL))
	assertExited(t, lb.Pid())
	_, err = f.WriteString("x")
	assert.ErrorIs(t, err, syscall.ENOTCONN, "write once the helper died")
	err = lb.Unmount()
	assert.ErrorIs(t, err, fusemount.ErrHelperExited, "Unmount after the helper died")
	assert.Contains(t, err.Error(), "signal: killed")
	assert.Contains(t, err.Error(), "the mount was detached")
	assert.False(t, mounted(t, dir, "loopback"), "%s: still mounted after Unmount", dir)
}

// The helper ends with its test binary, however that ends: killed with
// SIGKILL (no cleanup runs), or exiting without unmounting. Each time the
// helper unmounts first.
func TestHelperEndsWithParent(t *testing.T) {
	if os.Getenv("FUSEMOUNT_TEST_CHILD") == "1" {
		lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
		fmt.Printf("HELPER %d %s\n", lb.Pid(), lb.Dir())
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if line == "exit\n" {
			os.Exit(3) // no cleanup: the mount is left to the helper
		}
		t.Fatalf("child: got %q on stdin, want to be killed or told to exit", line)
	}
	for _, how := range []string{"SIGKILL", "exit"} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperEndsWithParent$", "-test.v")
			cmd.Env = append(os.Environ(), "FUSEMOUNT_TEST_CHILD=1", "GORACE=atexit_sleep_ms=0")
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			var pid int
			var dir string
			var out strings.Builder
			for sc := bufio.NewScanner(stdout); sc.Scan(); {
				out.WriteString(sc.Text() + "\n")
				if _, err := fmt.Sscanf(sc.Text(), "HELPER %d %s", &pid, &dir); err == nil {
					break
				}
			}
			if pid == 0 {
				require.NoError(t, stdin.Close())
				cmd.Wait()
				if strings.Contains(out.String(), "--- SKIP") {
					t.Skipf("the child skipped:\n%s", out.String())
				}
				t.Fatalf("the child printed no helper pid:\n%s", out.String())
			}
			require.True(t, mounted(t, dir, "loopback"), "%s: the child's mount", dir)
			if how == "SIGKILL" {
				require.NoError(t, cmd.Process.Kill())
			} else {
				_, err := stdin.Write([]byte("exit\n"))
				require.NoError(t, err)
			}
			err = cmd.Wait()
			stdin.Close()
			assert.Error(t, err, "the child's exit")
			assertExited(t, pid)
			assert.False(t, mounted(t, dir, "loopback"), "%s: still mounted after the helper exited", dir)
		})
	}
}

// A process that forks while it holds a descriptor on the mount, with one
// P (GOMAXPROCS=1): the child's dup3(2) onto that descriptor number closes
// it, which sends FUSE_FLUSH to the daemon while the forking thread waits
// in clone(2) holding the P. Served from the same process, that deadlocks
// (go-fuse's fs/api.go, "Deadlocks", 1b: checked, the child then hung in
// request_wait_answer until its FUSE connection was aborted); served by
// the helper, it does not.
func TestForkWithDescriptorOnMount(t *testing.T) {
	if os.Getenv("FUSEMOUNT_TEST_FORK") == "1" {
		lb := fusemount.LoopbackT(t, fusemount.LoopbackOptions{})
		f, err := os.Create(filepath.Join(lb.Dir(), "held"))
		require.NoError(t, err)
		defer f.Close()
		// ExtraFiles i goes to descriptor 3+i in the child, by dup3 onto
		// it: enough of them that one lands on f's number.
		var extra []*os.File
		for range int(f.Fd()) - 2 {
			null, err := os.Open(os.DevNull)
			require.NoError(t, err)
			defer null.Close()
			extra = append(extra, null)
		}
		for range 20 {
			cmd := exec.Command("/bin/true")
			cmd.ExtraFiles = extra
			require.NoError(t, cmd.Run())
		}
		fmt.Println("FORKED")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestForkWithDescriptorOnMount$", "-test.v")
	cmd.Env = append(os.Environ(), "FUSEMOUNT_TEST_FORK=1", "GOMAXPROCS=1", "GORACE=atexit_sleep_ms=0")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// Deadlocked, the child's vfork child holds the output pipe, and even
	// SIGKILL does not end it while the FUSE request waits: Wait must not
	// wait for that pipe after the kill.
	cmd.WaitDelay = 10 * time.Second
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	select {
	case err := <-done:
		if strings.Contains(out.String(), "--- SKIP") {
			t.Skipf("the child skipped:\n%s", out.String())
		}
		require.NoError(t, err, "the child:\n%s", out.String())
		assert.Contains(t, out.String(), "FORKED", "the child's output")
	case <-timeout.C:
		cmd.Process.Kill()
		<-done
		t.Fatalf("the child still forking after 2 minutes, deadlocked:\n%s", out.String())
	}
}

func TestStartReportsMountErrors(t *testing.T) {
	_, err := fusemount.Loopback("/proc/no/such/dir", t.TempDir(), fusemount.LoopbackOptions{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "loopback: mount /proc/no/such/dir: "), err.Error())
	assert.NotErrorIs(t, err, fusemount.ErrHelperExited, "the helper answered, then exited normally")
}

func TestServeReportsMountErrors(t *testing.T) {
	_, err := fusemount.Serve("/proc/no/such/dir", &gofs.Inode{}, fusemount.Options("fusemount-test", t.TempDir()))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "fusemount-test: mount /proc/no/such/dir: "), err.Error())
}

// loopback mounts without LoopbackT, for the tests of Unmount itself; the
// cleanup unmounts in case the test did not get that far.
func loopback(t *testing.T, dir, backing string) *fusemount.Process {
	t.Helper()
	lb, err := fusemount.Loopback(dir, backing, fusemount.LoopbackOptions{})
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("FUSE cannot mount here: %v", err) // as MountT
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = lb.Unmount() })
	return lb
}

// assertExited waits up to 30 s for the process pid, which need not be a
// child of this one, to exit: pidfd_open(2) gives a descriptor that
// poll(2) reports readable once it has.
func assertExited(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // gone already
	}
	require.NoError(t, err, "pidfd_open %d", pid)
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 30_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, 1, n, "process %d still running after 30 s: %s", pid, status(pid))
		return
	}
}

// status returns the State line of /proc/pid/status.
func status(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "State:") {
			return strings.TrimSpace(line)
		}
	}
	return "no status"
}
