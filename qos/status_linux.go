//go:build linux

package qos

import "github.com/offmain/offmain/internal/oneline"

// childStatus is what Inspect shows of a child's steps after start.
type childStatus struct {
	pid     int
	start   uint64 // the child's start time: tells it from a later process with its pid
	pending []string
	failed  error
}

// statusTable holds the status of children with a step pending, and of
// those with a failed step while they run: an entry goes once nothing is
// pending and its child has exited (or nothing failed), so the table is
// bounded by the children that run or wait for a step. Exited children are
// found when the table is next used (add, done, lookup).
type statusTable struct {
	byPid map[int]*childStatus
	alive func(pid int, start uint64) bool // nil: running
}

// add records steps pending (or none) for a child and returns its entry,
// the one it has already if any.
func (t *statusTable) add(pid int, start uint64, pending ...string) *childStatus {
	t.prune()
	if s := t.byPid[pid]; s != nil && s.start == start {
		s.pending = append(s.pending, pending...)
		return s
	}
	if t.byPid == nil {
		t.byPid = make(map[int]*childStatus)
	}
	s := &childStatus{pid: pid, start: start, pending: pending}
	t.byPid[pid] = s
	return s
}

// done records that step ran for s, with err if it failed.
func (t *statusTable) done(s *childStatus, step string, err error) {
	for i, p := range s.pending {
		if p == step {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			break
		}
	}
	if err != nil {
		s.failed = oneline.Join(s.failed, err)
	}
	t.prune()
}

// fail records a failed step that was never pending (taken at exec).
func (t *statusTable) fail(pid int, start uint64, err error) {
	t.done(t.add(pid, start), "", err)
}

// prune drops the entries with nothing pending whose child exited or that
// hold no failure.
func (t *statusTable) prune() {
	alive := t.alive
	if alive == nil {
		alive = running
	}
	for pid, s := range t.byPid {
		if len(s.pending) == 0 && (s.failed == nil || !alive(s.pid, s.start)) {
			delete(t.byPid, pid)
		}
	}
}

// lookup returns the status of process pid, if it is the child the status
// was recorded for: the one that started at start.
func (t *statusTable) lookup(pid int, start uint64) (pending []string, failed error) {
	t.prune()
	s := t.byPid[pid]
	if s == nil || s.start != start {
		return nil, nil
	}
	return append([]string(nil), s.pending...), s.failed
}
