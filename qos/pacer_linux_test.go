//go:build linux

package qos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeKernel stands in for /proc/<pid>/autogroup as an unprivileged user
// meets it: one write per window for the whole system, EAGAIN before that
// (kernel/sched/autogroup.c, proc_sched_autogroup_set_nice).
type fakeKernel struct {
	window time.Duration
	deny   bool // refuse every write (another process writes without pause)

	mu      sync.Mutex
	next    time.Time
	refused int
	writes  []step // in the order they landed
}

type step struct {
	pid int
	at  time.Duration // since start
}

func (k *fakeKernel) write(start time.Time) func(*session) error {
	return func(f *session) error {
		k.mu.Lock()
		defer k.mu.Unlock()
		now := time.Now()
		if k.deny || now.Before(k.next) {
			k.refused++
			return fmt.Errorf("write /proc/%d/autogroup: %w", f.pid, unix.EAGAIN)
		}
		k.next = now.Add(k.window)
		k.writes = append(k.writes, step{f.pid, now.Sub(start)})
		return nil
	}
}

// fakePacer returns a pacer whose steps go to k, started at the bubble's
// present time.
func fakePacer(k *fakeKernel) (*pacer, time.Time) {
	p, start := newPacer(), time.Now()
	p.write = k.write(start)
	p.status.alive = func(int, uint64) bool { return true }
	return p, start
}

func fakeSession(pid int, report func(error)) *session {
	return &session{pid: pid, nice: 5, report: report, done: make(chan struct{})}
}

// TestPacerSpacesWrites: a burst of twenty Setsid starts (a window restoring
// its terminal tabs) as an unprivileged user. Every autogroup write lands,
// in start order, the n-th about n windows after the first, after one
// refusal in all (the one that tells the pacer it is rate limited).
func TestPacerSpacesWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKernel{window: 100 * time.Millisecond}
		p, _ := fakePacer(k)
		var reported []error
		for pid := range 20 {
			p.add(fakeSession(pid, func(err error) { reported = append(reported, err) }))
		}
		require.NoError(t, p.wait(context.Background()))
		require.Len(t, k.writes, 20, "writes that landed: got %d, want 20", len(k.writes))
		for i, w := range k.writes {
			assert.Equal(t, i, w.pid, "write %d: got pid %d, want start order", i, w.pid)
			assert.Equal(t, time.Duration(i)*p.gap, w.at, "write %d landed at %v, want %v", i, w.at, time.Duration(i)*p.gap)
		}
		assert.Equal(t, 1, k.refused, "refused writes: got %d, want 1 (no busy retry)", k.refused)
		assert.Empty(t, reported, "failures reported: got %v, want none", reported)
	})
}

// TestPacerWaitsForAnotherWriter: another process wrote an autogroup 60 ms
// before; the pacer retries every poll until the window is free.
func TestPacerWaitsForAnotherWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKernel{window: 100 * time.Millisecond}
		k.next = time.Now().Add(40 * time.Millisecond)
		p, _ := fakePacer(k)
		p.add(fakeSession(1, nil))
		require.NoError(t, p.wait(context.Background()))
		require.Len(t, k.writes, 1)
		assert.Equal(t, 40*time.Millisecond, k.writes[0].at, "write landed at %v, want 40ms", k.writes[0].at)
		assert.Equal(t, 4, k.refused, "refused writes: got %d, want 4 (one every %v)", k.refused, p.poll)
	})
}

// TestPacerGivesUp: while another process takes every window, a write is
// retried for the budget, then reported as a stepError wrapping EAGAIN; the
// children queued behind it get two windows each, not a budget each, until
// a write lands again; nothing else happens to the children.
func TestPacerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKernel{window: 100 * time.Millisecond, deny: true}
		p, start := fakePacer(k)
		p.budget = time.Second
		var reported []error
		var at []time.Duration
		report := func(err error) { reported, at = append(reported, err), append(at, time.Since(start)) }
		p.add(fakeSession(1, report))
		p.add(fakeSession(2, report))
		p.add(fakeSession(3, report))
		require.NoError(t, p.wait(context.Background()))
		require.Len(t, reported, 3)
		// Tries come every poll, so a child gives up on the first poll at or
		// after its two windows.
		short := (2*p.gap + p.poll - 1) / p.poll * p.poll
		assert.Equal(t, []time.Duration{time.Second, time.Second + short, time.Second + 2*short}, at, "failures reported at")
		for i, err := range reported {
			var se *stepError
			require.True(t, errors.As(err, &se), "got %T, want *stepError", err)
			assert.Equal(t, i+1, se.pid)
			assert.Equal(t, "autogroup nice 5", se.step)
			assert.ErrorIs(t, err, unix.EAGAIN)
		}
	})
}

// TestPacerStatus: Inspect's view. A queued step is pending until it runs;
// a failed one stays visible, for the child it belongs to only.
func TestPacerStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKernel{window: 100 * time.Millisecond, deny: true}
		p, _ := fakePacer(k)
		p.budget = time.Second
		f := fakeSession(7, nil)
		f.start = 42
		p.add(f)
		synctest.Wait()
		pending, failed := p.lookup(7, 42)
		assert.Equal(t, []string{"autogroup nice 5"}, pending, "pending while the kernel refuses it")
		assert.NoError(t, failed)
		require.NoError(t, p.wait(context.Background()))
		pending, failed = p.lookup(7, 42)
		assert.Empty(t, pending)
		assert.ErrorIs(t, failed, unix.EAGAIN)
		pending, failed = p.lookup(7, 43)
		assert.Empty(t, pending, "another process with the same pid")
		assert.NoError(t, failed, "another process with the same pid")
	})
}

// When both of a child's steps fail (SCHED_IDLE at exec, the autogroup
// after start), Inspect's Applied.Failed holds both errors, reachable with
// errors.Is, in a text of one line.
func TestStatusJoinsFailuresOnOneLine(t *testing.T) {
	tbl := statusTable{alive: func(int, uint64) bool { return true }}
	f := &session{pid: 7, start: 99, nice: 15}
	idle := &stepError{path: "/bin/agent", pid: 7, step: "SCHED_IDLE, nice 15", err: unix.EPERM}
	ag := &stepError{path: "/bin/agent", pid: 7, step: f.step(), err: unix.EAGAIN}
	tbl.fail(7, 99, idle)
	tbl.done(tbl.add(7, 99, f.step()), f.step(), ag)

	pending, failed := tbl.lookup(7, 99)
	assert.Empty(t, pending, "pending steps")
	require.Error(t, failed)
	assert.ErrorIs(t, failed, unix.EPERM, "the SCHED_IDLE step's error")
	assert.ErrorIs(t, failed, unix.EAGAIN, "the autogroup step's error")
	assert.Equal(t, idle.Error()+" | "+ag.Error(), failed.Error(), "one line, the steps in order")
	_, failed = tbl.lookup(7, 100)
	assert.NoError(t, failed, "a later process with the same pid")
}

// TestStatusTableBounded: Inspect's status is kept for children that run
// or wait for a step, never for ones gone. 200 children each have a step
// that failed at exec and one still pending; once each has exited and its
// pending step ran, nothing is left, and while they run every failure
// shows.
func TestStatusTableBounded(t *testing.T) {
	alive := map[int]bool{}
	tbl := statusTable{alive: func(pid int, _ uint64) bool { return alive[pid] }}
	var entries []*childStatus
	for pid := 1; pid <= 200; pid++ {
		alive[pid] = true
		tbl.fail(pid, 1, &stepError{path: "/bin/agent", pid: pid, step: "SCHED_IDLE, nice 19", err: unix.EPERM})
		entries = append(entries, tbl.add(pid, 1, "autogroup nice 19"))
	}
	require.Len(t, tbl.byPid, 200, "entries while every child waits for a step")
	for i, s := range entries[:100] {
		tbl.done(s, "autogroup nice 19", nil) // these run on
		_, failed := tbl.lookup(i+1, 1)
		assert.ErrorIs(t, failed, unix.EPERM, "child %d runs: its failure shows", i+1)
	}
	for i, s := range entries[100:] {
		delete(alive, 101+i) // exits before its step
		tbl.done(s, "autogroup nice 19", nil)
	}
	assert.Len(t, tbl.byPid, 100, "entries: got %d, want the 100 children that run", len(tbl.byPid))
	for pid := 1; pid <= 100; pid++ {
		delete(alive, pid)
	}
	_, _ = tbl.lookup(1, 1)
	assert.Empty(t, tbl.byPid, "entries once every child exited: got %d, want 0", len(tbl.byPid))
}
