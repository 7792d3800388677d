//go:build linux

package qos

import (
	"errors"
	"math/rand/v2"
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
// every sessionPoll it reads its tree and writes the tier's nice value to
// each autogroup in it that is neither the app's nor already at the tier.

// sessionPoll is how often the holder reads its tree for new sessions: a
// session a descendant makes runs at autogroup nice 0 for up to this long,
// longer when the kernel's rate limit (one write per 100 ms system-wide for
// a normal user) refuses the write, which a look 10 to 20 ms later retries.
// One look at a tree of 11 processes and 15 threads took 0.6 to 0.8 ms on
// this project's 2-core VM while a CI run kept both cores busy
// (BenchmarkSessionScan): about 0.4 % of a core for each held command.
const sessionPoll = 200 * time.Millisecond

// sessionWatch is the holder's look at its tree's sessions.
type sessionWatch struct {
	nice   int                 // the tier's
	app    string              // the app's autogroup: its members are weighed within it
	denied map[string]struct{} // autogroups that refused the write (EPERM, EACCES: another user's)
}

// newSessionWatch returns the watch for a command at nice, or nil when
// there is nothing to watch: a tier that keeps nice 0, or a kernel that makes
// no autogroups, or an app whose autogroup is unknown (without it, a write
// could reach the app's own).
func newSessionWatch(nice int, app string) *sessionWatch {
	if nice <= 0 || app == "" || !autogroupOn() {
		return nil
	}
	return &sessionWatch{nice: nice, app: app, denied: map[string]struct{}{}}
}

// look writes the tier's nice value to every autogroup in the tree below
// root (root included) that runs below it. It returns how many writes the
// rate limit refused, for the next look to retry.
func (w *sessionWatch) look(root int) (refused int) {
	seen := map[string]bool{}
	for _, pid := range append([]int{root}, pidsBelow(root)...) {
		name, nice, err := autogroup(pid)
		if err != nil || seen[name] || name == w.app || name == rootAutogroup || nice >= w.nice {
			continue
		}
		seen[name] = true
		if _, no := w.denied[name]; no || !rootTaskGroup(pid) {
			continue
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		switch err := writeGroupNice(pid, p.start, w.nice, w.app); {
		case errors.Is(err, unix.EAGAIN):
			refused++
		case err != nil && running(pid, p.start):
			w.denied[name] = struct{}{}
		}
	}
	return refused
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

// after returns when to look next: after sessionPoll, or soon, 10 to 20
// ms, when the rate limit refused a write, so that a burst of new sessions
// gets its writes about 100 ms apart rather than a look apart.
func (w *sessionWatch) after(refused int) time.Duration {
	if refused > 0 {
		return 10*time.Millisecond + rand.N(10*time.Millisecond)
	}
	return sessionPoll
}

// childrenFiles reports whether this kernel has /proc/<pid>/task/<tid>/children.
var childrenFiles = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children")
	return err == nil
})

// ownGroupNice writes nice to the holder's own autogroup (that of the
// session the keeper leads) before the command starts, so that nothing of
// the command ever runs in it at nice 0. The kernel's rate limit refuses a
// normal user's write within 100 ms of anyone's; it retries every 10 to 20
// ms, so that of a burst of n Setsid starts the last waits about n x 100
// ms, for at most ownGroupWait, after which the command starts and the
// write is left to the app's pacer and the session watch. It reports
// whether the rate limit still refused it.
func ownGroupNice(nice int, app string) (refused bool, err error) {
	deadline := time.Now().Add(ownGroupWait)
	for {
		err := writeGroupNice(os.Getpid(), startTime(os.Getpid()), nice, app)
		if !errors.Is(err, unix.EAGAIN) {
			return false, err
		}
		if time.Now().After(deadline) {
			return true, nil
		}
		time.Sleep(10*time.Millisecond + rand.N(10*time.Millisecond))
	}
}

// ownGroupWait bounds how long a Setsid command's start waits for the rate
// limit: 5 s is a burst of about 50 Setsid starts at once.
const ownGroupWait = 5 * time.Second
