package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// helperEnv guards the child processes the tests start from this test binary
// (as os/exec's tests do): its value names the helper to run instead of the
// tests. Helpers register themselves in helpers from init functions.
const helperEnv = "QOS_TEST_HELPER"

var helpers = map[string]func() int{}

// describeTree describes the processes below this one, where the system
// tells (helpers_linux_test.go): what a hung helper waits for is often one
// of them.
var describeTree = func() string { return "(not read on " + runtime.GOOS + ")" }

// helperLimit bounds a helper's run: the longest runs a few seconds.
const helperLimit = 2 * time.Minute

func TestMain(m *testing.M) {
	Main() // the keeper and the holder a Group starts are this binary
	if name := os.Getenv(helperEnv); name != "" {
		h, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "qos test: no helper %q\n", name)
			os.Exit(2)
		}
		// A helper that hangs would hold its test until go test's timeout,
		// whose dump shows the test process alone: past helperLimit the
		// helper prints its own goroutines, for the test's failure message,
		// and exits.
		time.AfterFunc(helperLimit, func() {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "qos test: helper %q still ran after %v; its processes:\n%s\nits goroutines:\n%s",
				name, helperLimit, describeTree(), buf)
			os.Exit(3)
		})
		os.Exit(h())
	}
	goleak.VerifyTestMain(m)
}

func TestResolveMode(t *testing.T) {
	tests := []struct {
		name   string
		values []string // profile's, the app's environment's, the configuration's
		want   Mode
		from   int
		errHas string // "" when no error is expected
	}{
		{"none is utility", nil, ModeUtility, -1, ""},
		{"profile wins", []string{"background", "off", "utility"}, ModeBackground, 0, ""},
		{"app's environment after unset profile", []string{"", "off", "background"}, ModeOff, 1, ""},
		{"empty sets nothing", []string{"", "", "background"}, ModeBackground, 2, ""},
		{"all empty is utility", []string{"", ""}, ModeUtility, -1, ""},
		{"bad first value is an error", []string{"fast", "off"}, ModeUtility, 0, `qos: unknown mode "fast": want one of utility, background, off`},
		{"bad value after a good one is not read", []string{"off", "fast"}, ModeOff, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, from, err := ResolveMode(tc.values...)
			assert.Equal(t, tc.want, got, "mode: got %q, want %q", got, tc.want)
			assert.Equal(t, tc.from, from, "from: got %d, want %d", from, tc.from)
			if tc.errHas == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.errHas)
		})
	}
}

// TestResolveModeFromEnv: the values of EnvVar a process may have, as
// ResolveMode(os.Getenv(EnvVar)) resolves them.
func TestResolveModeFromEnv(t *testing.T) {
	tests := []struct {
		value string
		want  Mode
		bad   bool
	}{
		{"", ModeUtility, false},
		{"utility", ModeUtility, false},
		{"background", ModeBackground, false},
		{"off", ModeOff, false},
		{"Background", ModeUtility, true},
		{"fast", ModeUtility, true},
	}
	for _, tc := range tests {
		t.Run("value="+tc.value, func(t *testing.T) {
			t.Setenv(EnvVar, tc.value)
			got, _, err := ResolveMode(os.Getenv(EnvVar))
			assert.Equal(t, tc.want, got, "got %q, want %q", got, tc.want)
			if !tc.bad {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range []string{"utility", "background", "off", tc.value} {
				assert.Contains(t, err.Error(), s, "error %q should name %q", err, s)
			}
		})
	}
}

// TestModeForwarded: what an app puts in a child's environment,
// EnvVar+"="+mode, resolves to that mode in the child.
func TestModeForwarded(t *testing.T) {
	for _, m := range []Mode{ModeUtility, ModeBackground, ModeOff} {
		kv := EnvVar + "=" + string(m)
		v, ok := strings.CutPrefix(kv, "OFFMAIN_QOS=")
		require.True(t, ok)
		got, _, err := ResolveMode(v)
		assert.NoError(t, err)
		assert.Equal(t, m, got, "forwarded as %q", kv)
	}
}

func TestDescribe(t *testing.T) {
	d := Describe()
	lines := strings.Split(strings.TrimSpace(d), "\n")
	require.Len(t, lines, 2+3+1, "header, rule, three tiers, mode line:\n%s", d)
	for i, tier := range []Tier{Serving, Agent, Background} {
		assert.True(t, strings.HasPrefix(lines[2+i], "| "+tierNames[tier]+" |"), "row %d: got %q, want tier %s", i, lines[2+i], tierNames[tier])
		assert.Equal(t, 6, strings.Count(lines[2+i], "|"), "row %q should have 5 cells", lines[2+i])
	}
	assert.Contains(t, d, "off applies nothing")
}

func TestBadArguments(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	err := Start(cmd, Agent, "fast")
	assert.EqualError(t, err, `qos: unknown mode "fast": want one of utility, background, off`)
	assert.Nil(t, cmd.Process, "a refused command must not start")
	err = Start(cmd, Tier(7), ModeUtility)
	assert.EqualError(t, err, "qos: unknown tier 7")
	assert.Nil(t, cmd.Process, "a refused command must not start")
	var g Group
	assert.EqualError(t, g.Start(cmd, Tier(7), ModeUtility), "qos: unknown tier 7")
	assert.Nil(t, cmd.Process, "a refused command must not start")
	ran := false
	assert.ErrorContains(t, Do(Background, "x", func() { ran = true }), "unknown mode")
	assert.ErrorContains(t, EnterServing("x"), "unknown mode")
	assert.False(t, ran, "fn must not run for a bad mode")
}

// TestAppliedString: the status reads on one line and says whose autogroup
// the process is in, so that a nice value beside autogroup nice 0 reads as
// expected for a child in the app's session.
func TestAppliedString(t *testing.T) {
	tests := []struct {
		name string
		a    Applied
		want string
	}{
		{"child in the app's session", Applied{Nice: 15, Policy: "SCHED_OTHER", IOClass: "best-effort", IOLevel: 7,
			Autogroup: "/autogroup-410", AutogroupNice: 0, AppAutogroup: true, IOScheduler: "vda: mq-deadline honours the I/O class only"},
			"nice 15, SCHED_OTHER, I/O best-effort 7, in the app's autogroup /autogroup-410"},
		{"child in a session of its own", Applied{Nice: 15, Policy: "SCHED_OTHER", IOClass: "best-effort", IOLevel: 7,
			Autogroup: "/autogroup-411", AutogroupNice: 15},
			"nice 15, SCHED_OTHER, I/O best-effort 7, own autogroup /autogroup-411 at nice 15"},
		{"step pending and failed", Applied{Nice: 19, Policy: "SCHED_OTHER", IOClass: "idle",
			Autogroup: "/autogroup-412", Pending: []string{"SCHED_IDLE, nice 19"},
			Failed: errors.Join(&stepError{path: "/bin/agent", pid: 7, step: "autogroup nice 19", err: errors.New("EAGAIN")}, errors.New("second"))},
			"nice 19, SCHED_OTHER, I/O idle 0, own autogroup /autogroup-412 at nice 0; pending: SCHED_IDLE, nice 19; failed: qos: /bin/agent (pid 7) runs without a step: autogroup nice 19: EAGAIN | second"},
		{"Windows", Applied{Policy: "BELOW_NORMAL_PRIORITY_CLASS"}, "nice 0, BELOW_NORMAL_PRIORITY_CLASS"},
		{"Pid is left out", Applied{Pid: 42, Nice: 15}, "nice 15"},
		{"cgroup levers, one missing", Applied{Nice: 15, Policy: "SCHED_OTHER", Cgroup: "/sys/fs/cgroup/app/offmain-nice15/c1",
			Levers:  []string{"cpu.weight.nice 15"},
			Missing: []string{"I/O lever: the io controller is not delegated to /sys/fs/cgroup/app"}},
			"nice 15, SCHED_OTHER; cgroup lever: cpu.weight.nice 15; missing: I/O lever: the io controller is not delegated to /sys/fs/cgroup/app"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.a.String()
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "\n", "one line")
		})
	}
}

// TestGroupReportsOneAtATime: OnError is called one error at a time, as
// its documentation says, though Starts on several goroutines and the
// pacer report concurrently: a handler may append to a slice unlocked.
func TestGroupReportsOneAtATime(t *testing.T) {
	var inside, overlaps, calls int // the handler takes no lock of its own
	g := &Group{OnError: func(error) {
		inside++
		if inside > 1 {
			overlaps++
		}
		calls++
		runtime.Gosched()
		inside--
	}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				g.report(errors.New("qos: a step failed"))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1600, calls, "every error reaches OnError")
	assert.Zero(t, overlaps, "calls of OnError overlapped")
}

// TestGroupReportFromOnError: an OnError that calls into the Group, whose
// report comes back to OnError, does not wait for itself: the inner
// error is delivered once the outer call returns, still one at a time.
func TestGroupReportFromOnError(t *testing.T) {
	var got []string
	var g *Group
	g = &Group{OnError: func(err error) {
		got = append(got, err.Error())
		if err.Error() == "outer" {
			g.report(errors.New("inner"))
			got = append(got, "outer returns")
		}
	}}
	done := make(chan struct{})
	go func() { defer close(done); g.report(errors.New("outer")) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a report from inside OnError waited for the call it was in")
	}
	assert.Equal(t, []string{"outer", "outer returns", "inner"}, got)
}
