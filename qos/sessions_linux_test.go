//go:build linux

package qos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() { helpers["session-burst"] = sessionBurstHelper }

// sessionAgent is what sessionBurstHelper saw of one agent.
type sessionAgent struct {
	AtStart  string  // the agent's /proc/self/autogroup as its first command read it
	Daemon   int     // the process that made a session of its own later
	Nice     int     // its autogroup's nice value, last read
	Own      bool    // its autogroup is neither the app's nor the agent's
	Policy   string  // its scheduling policy
	DelayMs  float64 // from the setsid to the tier's nice value; -1: never
	Problems []string
}

type sessionReport struct {
	Uid    int
	Nice   int // the tier's
	Agents []sessionAgent
	Errors []string
}

// sessionBurstHelper starts ten agents at once through a Group, in the mode
// QOS_TEST_MODE names, with SysProcAttr.Setsid when QOS_TEST_SETSID is 1.
// Each agent's first command prints its session's autogroup; then, on one
// line from the helper to all of them at once, each starts a process that
// calls setsid(2) itself (setsid(1), which does not fork in a process that
// leads no process group) and prints its pid. The helper reads each such
// daemon until its autogroup reaches the tier's nice value, for 20 s at
// most, and prints a sessionReport as JSON.
func sessionBurstHelper() int {
	mode := Mode(os.Getenv("QOS_TEST_MODE"))
	r := sessionReport{Uid: os.Geteuid(), Nice: settingFor(Agent, mode).nice, Agents: make([]sessionAgent, 10)}
	g := &Group{KillAfter: 100 * time.Millisecond}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = g.Stop(ctx)
	}()
	ins := make([]io.WriteCloser, len(r.Agents))
	outs := make([]*bufio.Reader, len(r.Agents))
	var wg sync.WaitGroup
	for i := range r.Agents {
		wg.Go(func() {
			a := &r.Agents[i]
			// echo "$(cat ...)": a line even in the kernel's default
			// autogroup, whose file reads empty (kernel/sched/autogroup.c,
			// proc_sched_autogroup_show_task), as it does under a runner
			// that never called setsid(2).
			cmd := exec.Command("/bin/sh", "-c",
				`echo "$(cat /proc/self/autogroup)"; read go; setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; read end`)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: os.Getenv("QOS_TEST_SETSID") == "1"}
			out, _ := cmd.StdoutPipe()
			ins[i], _ = cmd.StdinPipe()
			if err := g.Start(cmd, Agent, mode); err != nil {
				a.Problems = append(a.Problems, err.Error())
				return
			}
			outs[i] = bufio.NewReader(out)
			line, err := outs[i].ReadString('\n')
			if err != nil {
				a.Problems = append(a.Problems, "first line: "+err.Error())
			}
			a.AtStart = strings.TrimSpace(line)
		})
	}
	wg.Wait()
	app, _, _ := autogroup(os.Getpid())
	setsidAt := time.Now()
	for i := range r.Agents {
		if outs[i] != nil {
			_, _ = io.WriteString(ins[i], "go\n")
		}
	}
	for i := range r.Agents {
		a := &r.Agents[i]
		if outs[i] == nil {
			continue
		}
		line, err := outs[i].ReadString('\n')
		if err == nil {
			a.Daemon, err = strconv.Atoi(strings.TrimSpace(line))
		}
		if err != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("daemon's pid: %q: %v", line, err))
		}
	}
	agentGroup := func(a *sessionAgent) string {
		name, _, err := parseAutogroup(a.AtStart)
		if err != nil {
			a.Problems = append(a.Problems, "its first line: "+err.Error())
		}
		return name
	}
	// Every daemon is read in each pass, so each delay is when it was
	// first seen at the tier's nice value, within one pass.
	for i := range r.Agents {
		r.Agents[i].DelayMs = -1
	}
	deadline := setsidAt.Add(20 * time.Second)
	// A pass every 2 ms: other processes' progress gives nothing to wait on.
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for left := true; left && time.Now().Before(deadline); {
		left = false
		for i := range r.Agents {
			a := &r.Agents[i]
			if a.Daemon == 0 || a.DelayMs >= 0 || len(a.Problems) > 0 {
				continue
			}
			name, nice, err := autogroup(a.Daemon)
			if err != nil {
				a.Problems = append(a.Problems, err.Error())
				continue
			}
			a.Nice, a.Own = nice, name != app && name != agentGroup(a)
			if a.Own && nice == r.Nice {
				a.DelayMs = float64(time.Since(setsidAt).Microseconds()) / 1000
			} else {
				left = true
			}
		}
		<-tick.C
	}
	for i := range r.Agents {
		if a := &r.Agents[i]; a.Daemon != 0 {
			if ap, err := Inspect(a.Daemon); err == nil {
				a.Policy = ap.Policy
			}
		}
	}
	for _, in := range ins {
		if in != nil {
			_ = in.Close()
		}
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return 0
}

// TestDescendantSessionGetsTier: an agent's descendant that makes a
// session of its own (setsid(1), as a daemonizing dev server or tmux does)
// gets an autogroup at nice 0 from the kernel; the holder's session watch
// brings it to the tier's nice value. Ten agents do it at once, as an
// unprivileged user (user nobody when the test runs as root), so the
// kernel's rate limit (one autogroup write per 100 ms system-wide) refuses
// most first writes. With Setsid, each agent's own session must already be
// at the tier's nice value when its first command runs: the holder waits
// out the rate limit before it starts the command.
func TestDescendantSessionGetsTier(t *testing.T) {
	for _, tc := range []struct {
		mode   Mode
		setsid bool
		policy string
	}{
		{ModeUtility, false, "SCHED_OTHER"},
		{ModeUtility, true, "SCHED_OTHER"},
		{ModeBackground, true, "SCHED_IDLE"},
	} {
		t.Run(fmt.Sprintf("%s/setsid=%v", tc.mode, tc.setsid), func(t *testing.T) {
			cmd := unprivilegedHelperCmd(t, "TestDescendantSessionGetsTier", "session-burst")
			cmd.Env = append(cmd.Env, "QOS_TEST_MODE="+string(tc.mode), "QOS_TEST_SETSID="+map[bool]string{true: "1"}[tc.setsid])
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "helper output:\n%s", out)
			var r sessionReport
			require.NoError(t, json.Unmarshal(out, &r), "helper output:\n%s", out)
			require.Empty(t, r.Errors)
			var delays []float64
			for i, a := range r.Agents {
				require.Empty(t, a.Problems, "agent %d", i)
				if tc.setsid {
					assert.True(t, strings.HasSuffix(a.AtStart, " nice "+strconv.Itoa(r.Nice)),
						"agent %d (uid %d): its session's autogroup when it started: %q, want nice %d", i, r.Uid, a.AtStart, r.Nice)
				}
				assert.True(t, a.Own, "agent %d: the daemon %d is in a session of its own", i, a.Daemon)
				assert.Equal(t, r.Nice, a.Nice, "agent %d (uid %d): the daemon %d's autogroup nice", i, r.Uid, a.Daemon)
				assert.Equal(t, tc.policy, a.Policy, "agent %d: the daemon's policy", i)
				delays = append(delays, a.DelayMs)
			}
			// How long the daemons ran at nice 0 is a figure for the docs,
			// not a check (shared machines only add latency).
			t.Logf("as uid %d: from setsid to the tier's autogroup nice (ms): %v", r.Uid, delays)
		})
	}
}

// BenchmarkSessionScan is one look of the holder's session watch at a tree
// of ten processes (sleep, one thread each) below this test process (whose
// threads are looked at too), none of which needs a write: the watch's
// cost on a tree that made no session.
func BenchmarkSessionScan(b *testing.B) {
	if !autogroupOn() {
		b.Skip("no autogroups: the holder does not look")
	}
	for range 10 {
		c := exec.Command("/bin/sleep", "1000")
		require.NoError(b, c.Start())
		b.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	app, _, err := autogroup(os.Getpid())
	require.NoError(b, err)
	w := newSessionWatch(15, app, "/bin/sleep")
	tids, err := tasks(os.Getpid())
	require.NoError(b, err)
	b.Logf("%d threads in the tree", len(tids)+10)
	for b.Loop() {
		if w.look(os.Getpid()); len(w.queued) != 0 {
			b.Fatal("a write was queued: none was due")
		}
	}
}

// TestSettledDeniesOnlyRefusals pins which finished writes leave an
// autogroup alone for good: a refusal (EPERM, another user's session) does;
// the rate limit (EAGAIN) and a session whose members kept exiting under
// the write do not, for the next look finds the session again with
// whatever member is left (a daemon's, once its short-lived leader is gone).
func TestSettledDeniesOnlyRefusals(t *testing.T) {
	w := &sessionWatch{nice: 15, app: "/autogroup-0", path: "agent", queued: map[string]*session{}, denied: map[string]bool{}}
	finished := func(name string, err error) {
		s := &session{name: name, done: make(chan struct{})}
		if err != nil {
			s.err = &stepError{path: "agent", pid: 1, step: "autogroup nice 15", err: err}
		}
		close(s.done)
		w.queued[name] = s
	}
	finished("/autogroup-1", nil)
	finished("/autogroup-2", syscall.EPERM)
	finished("/autogroup-3", syscall.EAGAIN)
	finished("/autogroup-4", fmt.Errorf("%w, in %d of the session's members in turn", errExited, sessionTries))
	w.queued["/autogroup-5"] = &session{name: "/autogroup-5", done: make(chan struct{})} // still on the pacer

	w.settled()

	assert.Equal(t, map[string]bool{"/autogroup-2": true}, w.denied, "only the refused autogroup is left alone")
	assert.Len(t, w.queued, 1, "the finished writes leave the queue")
	assert.Contains(t, w.queued, "/autogroup-5", "a write still on the pacer stays queued")
}
