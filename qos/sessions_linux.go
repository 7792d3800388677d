//go:build linux

package qos

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A process of an agent's tree that calls setsid(2) itself (a dev server or
// a language server that daemonizes, tmux, setsid(1), a double fork) gets a
// new autogroup at nice 0 (kernel/sched/autogroup.c,
// sched_autogroup_create_attach), and the CPU is shared between autogroups
// first: the whole session then weighs as much as the app's own, whatever
// the nice values inside it. No step at fork or exec can prevent that, and
// the kernel tells a normal user of no setsid (the proc connector,
// drivers/connector/cn_proc.c, needs CAP_NET_ADMIN). So the holder looks:
// every sessionPoll it reads its tree and queues, on its pacer, the tier's
// nice value for each autogroup in it that is neither the app's nor
// already at the tier.

// sessionPoll is how often the holder reads its tree for new sessions: a
// session a descendant makes runs at autogroup nice 0 for up to this long,
// and longer while the kernel's rate limit (one write per HZ/10
// system-wide for a normal user) defers the write. What one look costs is
// in bench/README.md.
const sessionPoll = 200 * time.Millisecond

// sessionWatch is the holder's look at its tree's sessions.
type sessionWatch struct {
	nice   int                 // the tier's
	app    string              // the app's autogroup: its members are weighed within it
	path   string              // the command, for errors
	queued map[string]*session // autogroups whose write is on the pacer
	denied map[string]bool     // autogroups that refused the write (EPERM, EACCES: another user's)
}

// newSessionWatch returns the watch for a command at nice, or nil when
// there is nothing to watch: a tier that keeps nice 0, or a kernel that makes
// no autogroups, or an app whose autogroup is unknown (without it, a write
// could reach the app's own).
func newSessionWatch(nice int, app, path string) *sessionWatch {
	if nice <= 0 || app == "" || !autogroupOn() {
		return nil
	}
	return &sessionWatch{nice: nice, app: app, path: path, queued: map[string]*session{}, denied: map[string]bool{}}
}

// look queues the tier's nice value for every autogroup in the tree below
// root (root included) that runs below it and is not queued already. An
// autogroup whose write failed for a reason other than the rate limit is
// left alone from then on.
func (w *sessionWatch) look(root int) {
	w.settled()
	seen := map[string]bool{}
	for _, pid := range append([]int{root}, pidsBelow(root)...) {
		name, nice, err := autogroup(pid)
		if err != nil || seen[name] || name == w.app || name == rootAutogroup || nice >= w.nice {
			continue
		}
		seen[name] = true
		if w.denied[name] || w.queued[name] != nil || !rootTaskGroup(pid) {
			continue
		}
		if p, ok := readProc(pid); ok {
			w.queue(p, name)
		}
	}
}

// queue puts the write of autogroup name, which process p is in, on the
// pacer.
func (w *sessionWatch) queue(p proc, name string) *session {
	s := &session{pid: p.pid, start: p.start, sid: p.sid, name: name, nice: w.nice, app: w.app,
		path: w.path, done: make(chan struct{})}
	w.queued[name] = s
	autogroups.add(s)
	return s
}

// settled forgets the writes that are done, denying the autogroups whose
// write failed other than by the rate limit or by its members exiting
// under it (a session with members left is looked at again).
func (w *sessionWatch) settled() {
	for name, s := range w.queued {
		select {
		case <-s.done:
			delete(w.queued, name)
			if s.err != nil && !errors.Is(s.err, unix.EAGAIN) && !errors.Is(s.err, errExited) {
				w.denied[name] = true
			}
		default:
		}
	}
}

// settle queues the autogroup of the session process pid is in (the
// keeper's, for the holder) and waits up to d for its write; it returns the
// write's error, or nil once d passed with the write still deferred by the
// rate limit (the pacer keeps trying).
func (w *sessionWatch) settle(pid int, d time.Duration) error {
	p, ok := readProc(pid)
	name, nice, err := autogroup(pid)
	if !ok || err != nil || name == w.app || name == rootAutogroup || nice >= w.nice || !rootTaskGroup(pid) {
		return err
	}
	s := w.queue(p, name)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.done:
		return s.err
	case <-t.C:
		return nil
	}
}

// pidsBelow returns the pids below root, found through each thread's
// children file (proc(5), /proc/<pid>/task/<tid>/children): a walk of the
// tree alone, not of every process on the machine. A process that forks or
// is reparented while it reads may be missed; the next look finds it.
// Where the kernel has no children files (CONFIG_PROC_CHILDREN), it reads
// all of /proc.
func pidsBelow(root int) []int {
	if !childrenFiles() {
		procs, err := allProcs()
		if err != nil {
			return nil
		}
		var out []int
		for _, p := range descendants(procs, root) {
			out = append(out, p.pid)
		}
		return out
	}
	var out []int
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		tids, err := tasks(pid)
		if err != nil {
			continue
		}
		for _, tid := range tids {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/children")
			if err != nil {
				continue
			}
			for f := range strings.FieldsSeq(string(b)) {
				c, err := strconv.Atoi(f)
				if err == nil && !seen[c] {
					seen[c] = true
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// childrenFiles reports whether this kernel has /proc/<pid>/task/<tid>/children.
var childrenFiles = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children")
	return err == nil
})
