package powercut_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offmain/offmain/internal/tmpmount"
	"github.com/offmain/offmain/reliability/internal/fusemount"
	"github.com/offmain/offmain/reliability/internal/powercut"
)

// write creates or truncates name and writes data, fsyncing it if sync.
func write(t *testing.T, name, data string, sync bool) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString(data)
	require.NoError(t, err)
	if sync {
		require.NoError(t, f.Sync())
	}
}

func syncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Sync())
}

// durable writes name with data, fsyncs it and its directory.
func durable(t *testing.T, name, data string) {
	t.Helper()
	write(t, name, data, true)
	syncDir(t, filepath.Dir(name))
}

// reboot cuts the power now and powers on again.
func reboot(t *testing.T, fsys *powercut.FS) {
	t.Helper()
	fsys.Cut()
	require.NoError(t, fsys.PowerOn())
}

// content returns name's content, or "<missing>".
func content(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	require.NoError(t, err)
	return string(b)
}

// TestRules shows each rule of the model on plain system calls, with
// Forget: what is not durable is lost.
func TestRules(t *testing.T) {
	tests := []struct {
		name string
		do   func(t *testing.T, dir string)
		want map[string]string // file -> content after the cut
	}{
		{"written, not fsynced: empty", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a"), "", false)
			syncDir(t, dir)
			write(t, filepath.Join(dir, "a"), "new", false)
		}, map[string]string{"a": ""}},
		{"written, fsynced, over old: new", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			write(t, filepath.Join(dir, "a"), "new", true)
		}, map[string]string{"a": "new"}},
		{"written in place, not fsynced: old", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			write(t, filepath.Join(dir, "a"), "new", false)
		}, map[string]string{"a": "old"}},
		{"created and fsynced, directory not: missing", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a"), "new", true)
		}, map[string]string{"a": "<missing>"}},
		{"renamed over, directory not fsynced: old", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			write(t, filepath.Join(dir, "a.tmp"), "new", true)
			require.NoError(t, os.Rename(filepath.Join(dir, "a.tmp"), filepath.Join(dir, "a")))
		}, map[string]string{"a": "old", "a.tmp": "<missing>"}},
		{"renamed over, both fsynced: new", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			write(t, filepath.Join(dir, "a.tmp"), "new", true)
			require.NoError(t, os.Rename(filepath.Join(dir, "a.tmp"), filepath.Join(dir, "a")))
			syncDir(t, dir)
		}, map[string]string{"a": "new", "a.tmp": "<missing>"}},
		{"renamed over, directory fsynced, file not: empty", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			write(t, filepath.Join(dir, "a.tmp"), "new", false)
			require.NoError(t, os.Rename(filepath.Join(dir, "a.tmp"), filepath.Join(dir, "a")))
			syncDir(t, dir)
		}, map[string]string{"a": ""}},
		{"unlinked, directory not fsynced: back", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			require.NoError(t, os.Remove(filepath.Join(dir, "a")))
		}, map[string]string{"a": "old"}},
		{"unlinked, directory fsynced: missing", func(t *testing.T, dir string) {
			durable(t, filepath.Join(dir, "a"), "old")
			require.NoError(t, os.Remove(filepath.Join(dir, "a")))
			syncDir(t, dir)
		}, map[string]string{"a": "<missing>"}},
		{"new directory, its parent not fsynced: missing", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o700))
			durable(t, filepath.Join(dir, "d", "a"), "new")
		}, map[string]string{"d/a": "<missing>"}},
		{"new directory, its parent fsynced: kept", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o700))
			syncDir(t, dir)
			durable(t, filepath.Join(dir, "d", "a"), "new")
		}, map[string]string{"d/a": "new"}},
	}
	fsys := powercut.MountT(t, powercut.Options{Forget: true})
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(fsys.Dir(), string(rune('a'+i)))
			require.NoError(t, os.Mkdir(dir, 0o700))
			syncDir(t, fsys.Dir())
			tt.do(t, dir)
			reboot(t, fsys)
			for name, want := range tt.want {
				assert.Equal(t, want, content(t, filepath.Join(dir, name)), "%s: got/want", name)
				b, err := os.ReadFile(filepath.Join(fsys.Backing(), filepath.Base(dir), name))
				if want == "<missing>" {
					assert.ErrorIs(t, err, fs.ErrNotExist, "%s in the backing directory", name)
				} else {
					assert.Equal(t, want, string(b), "%s in the backing directory: got/want", name)
				}
			}
		})
	}
}

// TestDraws shows what the default draws allow: a rename over a name
// leaves the old or the new file, never neither; a file written in place
// without fsync comes back old, or torn (some new bytes, then old ones or
// zeros); and with both fsyncs a rename always survives. Each outcome
// must show up in 200 cuts.
func TestDraws(t *testing.T) {
	fsys := powercut.MountT(t, powercut.Options{Seed: 7})
	a, tmp, b := filepath.Join(fsys.Dir(), "a"), filepath.Join(fsys.Dir(), "a.tmp"), filepath.Join(fsys.Dir(), "b")
	c := filepath.Join(fsys.Dir(), "c")
	durable(t, c+".x", "x")
	durable(t, a, "old")
	durable(t, b, "0123456789")
	seen := map[string]int{}
	for range 200 {
		write(t, c, "y", true)
		require.NoError(t, os.Rename(c, c+".x"))
		syncDir(t, fsys.Dir())
		write(t, tmp, "new", true)
		require.NoError(t, os.Rename(tmp, a))
		write(t, b, "ABCDEFGHIJKLMNOPQRST", false)
		reboot(t, fsys)
		got := content(t, a)
		require.Contains(t, []string{"old", "new"}, got, "a after a rename over it: got/want")
		seen["a="+got]++
		assert.Equal(t, "y", content(t, c+".x"), "renamed with both fsyncs: got/want")
		gb := content(t, b)
		switch {
		case gb == "0123456789":
			seen["b=old"]++
		case gb == "ABCDEFGHIJKLMNOPQRST":
			seen["b=new"]++
		default:
			seen["b=torn"]++
			assert.Contains(t, []int{10, 20}, len(gb), "torn b's size: got %q", gb)
		}
		durable(t, a, "old")
		durable(t, b, "0123456789")
	}
	t.Log(seen)
	for _, k := range []string{"a=old", "a=new", "b=old", "b=new", "b=torn"} {
		assert.Positive(t, seen[k], "outcome %s in 200 cuts", k)
	}
}

// TestTrigger cuts by count and just before or after a chosen operation.
func TestTrigger(t *testing.T) {
	fsys := powercut.MountT(t, powercut.Options{Forget: true})
	a, tmp := filepath.Join(fsys.Dir(), "a"), filepath.Join(fsys.Dir(), "a.tmp")
	durable(t, a, "old")
	save := func() error { // temp, fsync, rename, fsync the directory
		write(t, tmp, "new", true)
		if err := os.Rename(tmp, a); err != nil {
			return err
		}
		d, err := os.Open(fsys.Dir())
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	}

	done := fsys.Arm(powercut.Trigger{N: 1, Op: powercut.Rename, Before: true})
	assert.ErrorIs(t, save(), syscall.EIO, "the rename a cut came before")
	<-done
	require.NoError(t, fsys.PowerOn())
	assert.Equal(t, "old", content(t, a), "cut before the rename: got/want")

	done = fsys.Arm(powercut.Trigger{N: 1, Op: powercut.Rename})
	assert.ErrorIs(t, save(), syscall.EIO, "the directory fsync after the cut")
	<-done
	require.NoError(t, fsys.PowerOn())
	assert.Equal(t, "old", content(t, a), "cut after the rename, before the directory fsync: got/want")

	done = fsys.Arm(powercut.Trigger{N: 1, Op: powercut.FsyncDir})
	assert.NoError(t, save(), "the directory fsync the cut came after")
	<-done
	require.NoError(t, fsys.PowerOn())
	assert.Equal(t, "new", content(t, a), "cut after the directory fsync: got/want")

	before := fsys.Ops()
	done = fsys.Arm(powercut.Trigger{N: 3})
	f, err := os.Create(filepath.Join(fsys.Dir(), "b")) // 1: create
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("x") // 2: write
	require.NoError(t, err)
	_, err = f.WriteString("y") // 3: write, then the cut
	require.NoError(t, err)
	<-done
	_, err = f.WriteString("z")
	assert.ErrorIs(t, err, syscall.EIO, "a write after the cut")
	assert.Equal(t, before+3, fsys.Ops(), "counted operations: got/want")
	assert.Equal(t, 4, fsys.Cuts(), "cuts: got/want")
	require.NoError(t, fsys.PowerOn())
}

// TestDeadAfterCut checks that a descriptor opened before a cut fails with
// EIO, before and after power-on, and that nothing works while the power
// is off.
func TestDeadAfterCut(t *testing.T) {
	fsys := powercut.MountT(t, powercut.Options{})
	a := filepath.Join(fsys.Dir(), "a")
	durable(t, a, "old")
	f, err := os.OpenFile(a, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	fsys.Cut()
	_, err = f.WriteString("x")
	assert.ErrorIs(t, err, syscall.EIO, "write while the power is off")
	_, err = os.ReadFile(a)
	assert.ErrorIs(t, err, syscall.EIO, "open while the power is off")
	require.NoError(t, fsys.PowerOn())
	_, err = f.WriteString("x")
	assert.ErrorIs(t, err, syscall.EIO, "write on a descriptor from before the cut")
	assert.ErrorIs(t, f.Sync(), syscall.EIO, "fsync on a descriptor from before the cut")
	assert.Equal(t, "old", content(t, a), "after power-on: got/want")
}

// hangingWriter models a writer whose goroutine is stuck in a system
// call: its first Save starts a write that blocks until the test ends, and
// its Flush waits until its context ends, as statefile's does.
type hangingWriter struct {
	once  sync.Once
	stuck chan struct{}
	ended sync.WaitGroup
}

func (w *hangingWriter) Save(int) error {
	w.once.Do(func() { w.ended.Go(w.write) })
	return nil
}

func (w *hangingWriter) write() { <-w.stuck }

func (w *hangingWriter) Flush(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (w *hangingWriter) Close(context.Context) error { return nil }

// tortureHanging runs cuts cycles of a hangingWriter with a 100 ms
// HangGuard, each of which hangs.
func tortureHanging(t *testing.T, cuts int) powercut.Counts {
	t.Helper()
	fsys := powercut.MountT(t, powercut.Options{Seed: 1})
	w := &hangingWriter{stuck: make(chan struct{})}
	defer w.ended.Wait()
	defer close(w.stuck)
	subject := powercut.Subject{Open: func(string) (powercut.Writer, int, error) { return w, 0, nil }}
	c, err := powercut.Torture(fsys, fsys.Dir(), subject, powercut.Config{Cuts: cuts, Seed: 1, HangGuard: 100 * time.Millisecond})
	require.NoError(t, err)
	return c
}

// A cycle whose flushes wait past HangGuard is counted as a hang, and its
// fault carries the stacks taken while it hung: the stuck write is in
// them, and so is the Flush, still waiting.
func TestTortureCountsHangs(t *testing.T) {
	c := tortureHanging(t, 2)
	assert.Equal(t, 2, c.Cuts, "cuts")
	assert.Equal(t, 2, c.Hangs, "hangs")
	assert.Zero(t, c.DaemonStalls, "daemon stalls: the writer hung in Go, not in a system call on the mount")
	assert.Contains(t, c.String(), " hangs=2")
	require.Len(t, c.Faults, 2)
	assert.Regexp(t, `^cut 1: hang: the flushes waited over 100ms\n`, c.Faults[0])
	assert.Contains(t, c.Faults[0], "(*hangingWriter).write", "the stacks taken while it hung")
	assert.Regexp(t, `goroutine \d+ \[chan receive[^\]]*\]:\n[^\n]*\(\*hangingWriter\)\.Flush\(`, c.Faults[0],
		"the Flush still waiting when the stacks were taken, not released yet")
	if m := regexp.MustCompile(`; history \[([^\]]*)\]`).FindStringSubmatch(c.Faults[0]); assert.NotNil(t, m, "the cycle's history") {
		assert.Less(t, len(strings.Fields(m[1])), 100, "saves in the hung cycle: the cut comes at the hang, not 1,000 saves later")
	}
	assert.Contains(t, c.Faults[0], "threads (tid: state nice policy")
	assert.Contains(t, c.Faults[0], "helper process (pid ", "the helper's stacks too")
	assert.Contains(t, c.Faults[0], "fusemount.Serve", "the helper's goroutines")
	assert.Regexp(t, `scheduler: gomaxprocs=\d+ threads=\d+ goroutines running=\d+ runnable=\d+`, c.Faults[0], "the scheduler's counts")
	assert.Contains(t, c.Faults[0], "\nafter the Close: scheduler: ", "the counts once the cycle ended")
	assert.Regexp(t, `\ntimeline \(per second[^\n]*\n(  \d\d:\d\d:\d\d\.\d{3} \+[^\n]*\n)*  in all: test cpu \S+ wait \S+; helper cpu \S+ wait \S+; cpu pressure \S+\n`,
		c.Faults[0], "the minute before the hang, from /proc")
	assert.Regexp(t, `\nlast steps of the torture [^\n]*\n  \d\d:\d\d:\d\d\.\d{6} save 1 +\S+ ops=\d+ ok\n`, c.Faults[0],
		"the save the hung flush followed")
	assert.Regexp(t, `\n  \d\d:\d\d:\d\d\.\d{6} flush +in flight for \S+, ops=\d+ at its start, \d+ now\n`, c.Faults[0],
		"the flush that hung, still in flight")
	t.Log(c.Faults[0][:strings.Index(c.Faults[0], "\n\n")])
	assert.Zero(t, c.Acked, "acknowledged")
}

// stallWriter's first Flush stops the helper (SIGSTOP) and stats a file
// on the mount: its thread waits for an answer the daemon cannot give
// until cont is closed.
type stallWriter struct {
	fsys  *powercut.FS
	guard time.Duration
	cont  chan struct{}
	once  sync.Once
	err   error
	took  time.Duration // how long the stat waited

	stopResume func() // resumes the helper now, if it has not been
}

// waitStopped waits until every thread of pid is stopped (state T in
// /proc/pid/task/tid/stat, proc(5)), for at most limit.
func waitStopped(pid int, limit time.Duration) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(limit)
	for {
		stopped, err := allStopped(pid)
		if err != nil || stopped {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("helper %d: not every thread stopped %v after SIGSTOP", pid, limit)
		}
		<-tick.C
	}
}

func allStopped(pid int) (bool, error) {
	dir := fmt.Sprintf("/proc/%d/task/", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range tasks {
		st, err := os.ReadFile(dir + e.Name() + "/stat")
		if err != nil {
			return false, err
		}
		// The state follows the command's closing parenthesis.
		j := strings.LastIndexByte(string(st), ')')
		if j < 0 || j+2 >= len(st) || st[j+2] != 'T' {
			return false, nil
		}
	}
	return true, nil
}

func (w *stallWriter) Save(int) error { return nil }

func (w *stallWriter) Flush(ctx context.Context) error {
	w.once.Do(func() {
		pid := powercut.HelperPid(w.fsys)
		if w.err = syscall.Kill(pid, syscall.SIGSTOP); w.err != nil {
			return
		}
		// kill(2) returns before the stop takes effect: a helper
		// thread already past its wait in read(2) of /dev/fuse would
		// answer the stat below (fuse_dev_do_read, fs/fuse/dev.c,
		// dequeues a pending request without checking for signals),
		// as it did beside busy loops. Stat only once every thread of
		// the helper is stopped.
		if w.err = waitStopped(pid, w.guard); w.err != nil {
			return
		}
		// The helper goes on a second after the guard has fired (the
		// guard started before this first Flush): its stacks, which the
		// report asks for, wait for it until then.
		resume := time.AfterFunc(w.guard+time.Second, func() { close(w.cont) })
		w.stopResume = func() {
			if resume.Stop() {
				close(w.cont)
			}
		}
		go func() {
			<-w.cont
			syscall.Kill(pid, syscall.SIGCONT)
		}()
		start := time.Now()
		_, w.err = os.Stat(filepath.Join(w.fsys.Dir(), "x"))
		w.took = time.Since(start)
	})
	<-ctx.Done()
	return ctx.Err()
}

func (w *stallWriter) Close(context.Context) error { return nil }

// A cycle whose writer waits in a system call the FUSE daemon does not
// answer, with no operation counted, is a daemon stall, not a hang: the
// report is the same, but no writer could cause or cure it.
func TestTortureTellsDaemonStall(t *testing.T) {
	fsys := powercut.MountT(t, powercut.Options{Seed: 1})
	// Long enough for the timeline's 1 s samples to see the thread
	// blocked over half of it.
	const guard = 5 * time.Second
	w := &stallWriter{fsys: fsys, guard: guard, cont: make(chan struct{})}
	t.Cleanup(func() { // before MountT's unmount, which needs the helper running
		if w.stopResume != nil {
			w.stopResume()
		}
	})
	subject := powercut.Subject{Open: func(string) (powercut.Writer, int, error) { return w, 0, nil }}
	c, err := powercut.Torture(fsys, fsys.Dir(), subject, powercut.Config{Cuts: 1, Seed: 1, HangGuard: guard})
	require.NoError(t, err)
	require.ErrorIs(t, w.err, fs.ErrNotExist, "the stat, once the helper went on")
	require.GreaterOrEqual(t, w.took, guard, "the stat waited for the stopped helper until the guard had fired")
	assert.Equal(t, 1, c.DaemonStalls, "daemon stalls")
	assert.Zero(t, c.Hangs, "hangs")
	assert.Contains(t, c.String(), " hangs=0 daemon-stalls=1")
	require.Len(t, c.Faults, 1)
	assert.Regexp(t, `^cut 1: daemon stall: the flushes waited over 5s\n`, c.Faults[0])
	assert.Regexp(t, `\n  \d\d:\d\d:\d\d\.\d{3} \+[^\n]* ops\+0 +test +\d+/\d+ +\d+/1/\d+ `, c.Faults[0],
		"a second in which the test process's thread waited for the daemon and nothing was counted")
}

// With EnvTrace set, a hang writes the flight recordings of both
// processes' execution traces, and its report says where.
func TestTortureHangTraces(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(powercut.EnvTrace, dir)
	c := tortureHanging(t, 1)
	require.Len(t, c.Faults, 1)
	for _, who := range []string{"this process", "the helper"} {
		m := regexp.MustCompile(`\nflight recording of ` + who + `: (\S+)\n`).FindStringSubmatch(c.Faults[0] + "\n")
		if !assert.NotNil(t, m, "where %s's recording went", who) {
			continue
		}
		data, err := os.ReadFile(m[1])
		require.NoError(t, err)
		assert.Equal(t, dir, filepath.Dir(m[1]))
		// The trace format's header (src/internal/trace/version).
		assert.Regexp(t, `^go 1\.\d+ trace\x00`, string(data[:min(len(data), 16)]), "%s's recording", who)
	}
}

// The filesystem is served by a helper process, not by the process that
// uses it (go-fuse's fs/api.go, "Deadlocks"): this one holds no /dev/fuse
// descriptor.
func TestServedByHelper(t *testing.T) {
	fsys := powercut.MountT(t, powercut.Options{})
	durable(t, filepath.Join(fsys.Dir(), "a"), "x")
	self, err := fusemount.ServesFUSE(os.Getpid())
	require.NoError(t, err)
	assert.False(t, self, "this process holds a /dev/fuse descriptor: it serves the mount it uses")
	helper, err := fusemount.ServesFUSE(powercut.HelperPid(fsys))
	require.NoError(t, err)
	assert.True(t, helper, "the helper holds no /dev/fuse descriptor")
}

// A helper that dies ends a Torture with an error, not a hang: the armed
// cut's channel closes, PowerOn fails, and Unmount detaches the mount.
func TestHelperDies(t *testing.T) {
	backing, dir := t.TempDir(), t.TempDir()
	fsys, err := powercut.Mount(dir, backing, powercut.Options{Seed: 1})
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		t.Skipf("FUSE cannot mount here: %v", err) // as MountT
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = fsys.Unmount() })
	w := &killingWriter{pid: powercut.HelperPid(fsys)}
	subject := powercut.Subject{Open: func(string) (powercut.Writer, int, error) { return w, 0, nil }}
	_, err = powercut.Torture(fsys, fsys.Dir(), subject, powercut.Config{Cuts: 10, Seed: 1})
	assert.ErrorIs(t, err, fusemount.ErrHelperExited, "Torture once the helper died")
	assert.ErrorIs(t, fsys.PowerOn(), fusemount.ErrHelperExited, "PowerOn")
	select {
	case <-fsys.Arm(powercut.Trigger{}):
	default:
		t.Error("a trigger armed after the helper died: got its channel open, want it closed")
	}
	assert.ErrorIs(t, fsys.Unmount(), fusemount.ErrHelperExited, "Unmount")
	mounted, err := tmpmount.Mounted(dir)
	require.NoError(t, err)
	assert.False(t, mounted, "%s still mounted", dir)
}

// killingWriter kills the helper at its first Save, and writes nothing.
type killingWriter struct {
	pid  int
	once sync.Once
}

func (w *killingWriter) Save(int) error {
	w.once.Do(func() {
		if err := syscall.Kill(w.pid, syscall.SIGKILL); err != nil {
			panic(err)
		}
	})
	return nil
}

func (w *killingWriter) Flush(context.Context) error { return nil }
func (w *killingWriter) Close(context.Context) error { return nil }

// syncWriter writes each value through the mount before Save returns,
// and counts the Saves that find the power already off at their first
// system call: steps the torture took after its cut.
type syncWriter struct {
	dir   string
	saves int
	late  int
}

func (w *syncWriter) Save(v int) error {
	w.saves++
	f, err := os.OpenFile(filepath.Join(w.dir, "v"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if errors.Is(err, syscall.EIO) {
		w.late++
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(strconv.Itoa(v))
	return err
}

func (w *syncWriter) Flush(context.Context) error { return errors.New("never acknowledged") }
func (w *syncWriter) Close(context.Context) error { return nil }

// A torture takes no step after its cut: it sees the cut the moment the
// system call that made it returns, not when the helper's event has been
// read. Taking steps after it would let a Flush that only reports an
// earlier state count as an acknowledgement the writer could never have
// made.
func TestTortureStopsAtCut(t *testing.T) {
	fsys := powercut.MountT(t, powercut.Options{Seed: 3})
	w := &syncWriter{dir: fsys.Dir()}
	subject := powercut.Subject{Open: func(string) (powercut.Writer, int, error) { return w, 0, nil }}
	c, err := powercut.Torture(fsys, fsys.Dir(), subject, powercut.Config{Cuts: 300, Seed: 3, MaxOps: 6})
	require.NoError(t, err)
	assert.Equal(t, 300, c.Cuts, "cuts")
	assert.Zero(t, w.late, "Saves made after the cut, out of %d", w.saves)
}
