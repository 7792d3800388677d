package qos

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Stop stops every command of the Group, and every process each started,
// and returns when all have exited or when ctx ends. Each process of each
// tree gets SIGTERM (see [Group] for what is reached where); whatever still
// runs after [Group.KillAfter] (or halfway to ctx's deadline, if sooner)
// gets SIGKILL, again until nothing does. On Windows, which has no SIGTERM,
// each command's job is terminated at once (TerminateJobObject).
//
// Stop also waits for Starts under way, and afterwards the Group starts
// nothing more. It returns nil when everything exited on SIGTERM; an error
// wrapping [ErrKilled] that names what had to be killed when everything
// exited after SIGKILL; an error wrapping [fs.ErrPermission] that names
// the processes it may not signal (another user's, as after sudo), which it
// leaves running and does not wait for; or an error wrapping ctx's error
// that names the commands still running. A second Stop stops what the first
// could not.
func (g *Group) Stop(ctx context.Context) error {
	ms := g.stopStarting(ctx)
	for _, m := range ms {
		m.terminate()
	}
	kill := g.killTimer(ctx)
	defer kill.Stop()
	if waitDone(ctx, ms, kill.C, nil, member.done) {
		return g.pruned(nil, nil, nil)
	}
	var killed []string
	killAll := func() {
		for _, m := range ms {
			if !m.done() {
				killed = append(killed, m.kill()...)
			}
		}
	}
	killAll()
	settled := waitDone(ctx, ms, nil, killAll, func(m member) bool { return m.done() || m.stuck() != nil })
	var refused []string
	for _, m := range ms {
		if r := m.stuck(); r != nil {
			refused = append(refused, r...)
			m.release()
		}
	}
	if settled {
		return g.pruned(killed, refused, nil)
	}
	return g.pruned(killed, refused, ctx.Err())
}

// stopStarting marks the Group stopped, waits for the Starts under way (or
// ctx), and returns the members whose trees still run.
func (g *Group) stopStarting(ctx context.Context) []member {
	g.mu.Lock()
	g.stopped = true
	var idle chan struct{}
	if g.starting > 0 {
		if g.idle == nil {
			g.idle = make(chan struct{})
		}
		idle = g.idle
	}
	g.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = prune(g.members)
	return append([]member(nil), g.members...)
}

// killTimer returns the timer for the SIGKILL: KillAfter from now, or
// halfway to ctx's deadline if that is sooner.
func (g *Group) killTimer(ctx context.Context) *time.Timer {
	d := g.killAfter()
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return time.NewTimer(d)
}

// killAfter is KillAfter, or its default.
func (g *Group) killAfter() time.Duration {
	if g.KillAfter <= 0 {
		return defaultKillAfter
	}
	return g.KillAfter
}

// pruned drops the members that are done and returns Stop's error: nil,
// an error naming killed (ErrKilled) and refused (fs.ErrPermission), or, if
// err is not nil and commands still run, an error naming them that wraps
// err.
func (g *Group) pruned(killed, refused []string, err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = prune(g.members)
	if err != nil && len(g.members) > 0 {
		pids := make([]int, len(g.members))
		for i, m := range g.members {
			pids[i] = m.pid()
		}
		return fmt.Errorf("qos: stop: %d commands still running after SIGKILL (pids %v): %w", len(pids), pids, err)
	}
	if len(killed) > 0 || len(refused) > 0 {
		return &killedError{after: g.killAfter(), killed: killed, refused: refused}
	}
	return nil
}

// killedError is Stop's error when it had to send SIGKILL.
type killedError struct {
	after   time.Duration
	killed  []string // "pid 12 (sleep)"
	refused []string // those it may not signal
}

func (e *killedError) Error() string {
	var parts []string
	if len(e.killed) > 0 {
		parts = append(parts, fmt.Sprintf("%d processes still ran %v after SIGTERM and were killed: %s",
			len(e.killed), e.after, strings.Join(e.killed, ", ")))
	}
	if len(e.refused) > 0 {
		parts = append(parts, fmt.Sprintf("%d processes could not be killed (EPERM: another user's, as after sudo) and still run: %s",
			len(e.refused), strings.Join(e.refused, ", ")))
	}
	return "qos: stop: " + strings.Join(parts, "; ")
}

func (e *killedError) Is(target error) bool {
	return target == ErrKilled && len(e.killed) > 0 || target == fs.ErrPermission && len(e.refused) > 0
}

// prune returns ms without the members that are done, which it closes.
func prune(ms []member) []member {
	live := ms[:0]
	for _, m := range ms {
		if m.done() {
			m.close()
			continue
		}
		live = append(live, m)
	}
	clear(ms[len(live):])
	return live
}

// exitPoll is how often Stop looks whether the trees have exited.
const exitPoll = 10 * time.Millisecond

// waitDone reports whether every member is settled before ctx ended or
// until fired (nil: never). each, if not nil, runs at every look.
func waitDone(ctx context.Context, ms []member, until <-chan time.Time, each func(), settled func(member) bool) bool {
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		all := true
		for _, m := range ms {
			all = all && settled(m)
		}
		if all {
			return true
		}
		select {
		case <-tick.C:
			if each != nil {
				each()
			}
		case <-until:
			return false
		case <-ctx.Done():
			return false
		}
	}
}
