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
	idles   []step
}

type step struct {
	pid int
	at  time.Duration // since start
}

func (k *fakeKernel) write(start time.Time) func(*followUp) error {
	return func(f *followUp) error {
		k.mu.Lock()
		defer k.mu.Unlock()
		now := time.Now()
		if k.deny || now.Before(k.next) {
			k.refused++
			return fmt.Errorf("write /proc/%d/autogroup: %w", f.child.pid, unix.EAGAIN)
		}
		k.next = now.Add(k.window)
		k.writes = append(k.writes, step{f.child.pid, now.Sub(start)})
		return nil
	}
}

func (k *fakeKernel) idle(start time.Time) func(*followUp) error {
	return func(f *followUp) error {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.idles = append(k.idles, step{f.child.pid, time.Since(start)})
		return nil
	}
}

// fakePacer returns a pacer whose steps go to k, started at the bubble's
// present time.
func fakePacer(k *fakeKernel) (*pacer, time.Time) {
	p, start := newPacer(), time.Now()
	p.applyAutogroup, p.applyIdle = k.write(start), k.idle(start)
	return p, start
}

func fakeFollowUp(pid int, idle, group bool, report func(error)) *followUp {
	return &followUp{child: child{pid: pid, pidfd: -1}, nice: 5, idle: idle, autogroup: group, report: report}
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
			p.add(fakeFollowUp(pid, false, true, func(err error) { reported = append(reported, err) }))
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
		p.add(fakeFollowUp(1, false, true, nil))
		require.NoError(t, p.wait(context.Background()))
		require.Len(t, k.writes, 1)
		assert.Equal(t, 40*time.Millisecond, k.writes[0].at, "write landed at %v, want 40ms", k.writes[0].at)
		assert.Equal(t, 4, k.refused, "refused writes: got %d, want 4 (one every %v)", k.refused, p.poll)
	})
}

// TestPacerIdleNotPaced: SCHED_IDLE moves are not rate limited, so they
// never wait behind autogroup writes, even ones queued earlier.
func TestPacerIdleNotPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKernel{window: 100 * time.Millisecond}
		p, _ := fakePacer(k)
		for pid := range 5 {
			p.add(fakeFollowUp(pid, false, true, nil))
		}
		mid := time.NewTimer(150 * time.Millisecond) // the bubble's clock: the pacer is mid-queue
		<-mid.C
		p.add(fakeFollowUp(10, true, true, nil))
		require.NoError(t, p.wait(context.Background()))
		require.Len(t, k.idles, 1)
		assert.Equal(t, step{10, 150 * time.Millisecond}, k.idles[0], "idle move: got %+v, want at once", k.idles[0])
		require.Len(t, k.writes, 6)
		assert.Equal(t, 10, k.writes[5].pid, "the late child's autogroup write comes last")
	})
}

// TestPacerGivesUp: while another process takes every window, a write is
// retried for the budget, then reported as a StepError wrapping EAGAIN; the
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
		p.add(fakeFollowUp(1, false, true, report))
		p.add(fakeFollowUp(2, false, true, report))
		p.add(fakeFollowUp(3, false, true, report))
		require.NoError(t, p.wait(context.Background()))
		require.Len(t, reported, 3)
		// Tries come every poll, so a child gives up on the first poll at or
		// after its two windows.
		short := (2*p.gap + p.poll - 1) / p.poll * p.poll
		assert.Equal(t, []time.Duration{time.Second, time.Second + short, time.Second + 2*short}, at, "failures reported at")
		for i, err := range reported {
			var se *StepError
			require.True(t, errors.As(err, &se), "got %T, want *StepError", err)
			assert.Equal(t, i+1, se.Pid)
			assert.Equal(t, "autogroup nice 5", se.Step)
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
		f := fakeFollowUp(7, true, true, nil)
		f.start = 42
		p.add(f)
		synctest.Wait()
		p.mu.Lock()
		pending, failed := p.status.lookup(7, 42)
		p.mu.Unlock()
		assert.Equal(t, []string{"autogroup nice 5"}, pending, "pending once the idle move ran")
		assert.NoError(t, failed)
		require.NoError(t, p.wait(context.Background()))
		p.mu.Lock()
		defer p.mu.Unlock()
		pending, failed = p.status.lookup(7, 42)
		assert.Empty(t, pending)
		assert.ErrorIs(t, failed, unix.EAGAIN)
		pending, failed = p.status.lookup(7, 43)
		assert.Empty(t, pending, "another process with the same pid")
		assert.NoError(t, failed, "another process with the same pid")
	})
}

// When both of a child's steps fail, Inspect's Applied.Failed holds both
// errors, reachable with errors.Is, in a text of one line.
func TestStatusJoinsFailuresOnOneLine(t *testing.T) {
	var tbl statusTable
	f := &followUp{child: child{pid: 7, pidfd: -1}, start: 99, nice: 15, idle: true, autogroup: true}
	tbl.add(f)
	idle := &StepError{Pid: 7, Step: f.stepName("SCHED_IDLE"), Err: unix.EPERM}
	ag := &StepError{Pid: 7, Step: f.stepName("autogroup"), Err: unix.EAGAIN}
	tbl.done(f, f.stepName("SCHED_IDLE"), idle)
	tbl.done(f, f.stepName("autogroup"), ag)

	pending, failed := tbl.lookup(7, 99)
	assert.Empty(t, pending, "pending steps")
	require.Error(t, failed)
	assert.ErrorIs(t, failed, unix.EPERM, "the SCHED_IDLE step's error")
	assert.ErrorIs(t, failed, unix.EAGAIN, "the autogroup step's error")
	assert.Equal(t, idle.Error()+" | "+ag.Error(), failed.Error(), "one line, the steps in order")
	_, failed = tbl.lookup(7, 100)
	assert.NoError(t, failed, "a later process with the same pid")
}
