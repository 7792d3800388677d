package qos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
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

func TestResolve(t *testing.T) {
	profile := func(v string) Source { return EnvSource("profile work", []string{"PATH=/bin", EnvVar + "=" + v}) }
	daemon := func(v string) Source { return EnvSource("the daemon's environment", []string{EnvVar + "=" + v}) }
	config := func(v string) Source { return Source{Origin: "config key qos", Value: v} }
	tests := []struct {
		name    string
		sources []Source
		want    Mode
		errHas  string // "" when no error is expected
	}{
		{"none is utility", nil, ModeUtility, ""},
		{"profile wins", []Source{profile("background"), daemon("off"), config("utility")}, ModeBackground, ""},
		{"daemon after unset profile", []Source{EnvSource("profile work", []string{"PATH=/bin"}), daemon("off"), config("background")}, ModeOff, ""},
		{"empty sets nothing", []Source{profile(""), daemon(""), config("background")}, ModeBackground, ""},
		{"all empty is utility", []Source{profile(""), config("")}, ModeUtility, ""},
		{"last duplicate counts", []Source{EnvSource("p", []string{EnvVar + "=off", EnvVar + "=background"})}, ModeBackground, ""},
		{"bad first value is an error", []Source{profile("fast"), daemon("off")}, ModeUtility, `"fast" in OFFMAIN_QOS in profile work`},
		{"bad value after a good one is not read", []Source{daemon("off"), config("fast")}, ModeOff, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.sources...)
			assert.Equal(t, tc.want, got, "mode: got %q, want %q", got, tc.want)
			if tc.errHas == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrMode)
			assert.ErrorContains(t, err, tc.errHas)
		})
	}
}

func TestModeFromEnv(t *testing.T) {
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
			got, err := ModeFromEnv()
			assert.Equal(t, tc.want, got, "got %q, want %q", got, tc.want)
			if !tc.bad {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMode)
			for _, s := range []string{EnvVar, "utility", "background", "off", tc.value} {
				assert.Contains(t, err.Error(), s, "error %q should name %q", err, s)
			}
		})
	}
	t.Run("unset", func(t *testing.T) {
		t.Setenv(EnvVar, "x") // restores the variable after the test
		require.NoError(t, os.Unsetenv(EnvVar))
		got, err := ModeFromEnv()
		assert.NoError(t, err)
		assert.Equal(t, ModeUtility, got, "got %q, want utility", got)
	})
}

func TestEnv(t *testing.T) {
	assert.Equal(t, "OFFMAIN_QOS=background", Env(ModeBackground))
	assert.Equal(t, "OFFMAIN_QOS=off", Env(ModeOff))
	assert.Equal(t, "OFFMAIN_QOS=utility", Env(""), "the zero Mode is written as utility")
	got, err := Resolve(EnvSource("child", []string{Env(ModeOff)}))
	assert.NoError(t, err)
	assert.Equal(t, ModeOff, got, "Env round-trips through EnvSource: got %q", got)
}

func TestDescribe(t *testing.T) {
	d := Describe()
	lines := strings.Split(strings.TrimSpace(d), "\n")
	require.Len(t, lines, 2+3+1, "header, rule, three tiers, mode line:\n%s", d)
	for i, tier := range []Tier{Serving, Agent, Background} {
		assert.True(t, strings.HasPrefix(lines[2+i], "| "+tier.String()+" |"), "row %d: got %q, want tier %s", i, lines[2+i], tier)
		assert.Equal(t, 6, strings.Count(lines[2+i], "|"), "row %q should have 5 cells", lines[2+i])
	}
	assert.Contains(t, d, "off applies nothing")
}

func TestBadArguments(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	err := Start(cmd, Agent, "fast")
	assert.ErrorIs(t, err, ErrMode)
	assert.Nil(t, cmd.Process, "a refused command must not start")
	err = Start(cmd, Tier(7), ModeUtility)
	assert.ErrorIs(t, err, ErrTier)
	assert.Nil(t, cmd.Process, "a refused command must not start")
	ran := false
	assert.ErrorIs(t, Do(Background, "x", func() { ran = true }), ErrMode)
	assert.ErrorIs(t, EnterServing("x"), ErrMode)
	assert.False(t, ran, "fn must not run for a bad mode")
	assert.Equal(t, "Tier(7)", Tier(7).String())
	assert.True(t, errors.Is(err, ErrTier))
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
			Failed: errors.Join(&StepError{Pid: 7, Step: "autogroup nice 19", Err: errors.New("EAGAIN")}, errors.New("second"))},
			"nice 19, SCHED_OTHER, I/O idle 0, own autogroup /autogroup-412 at nice 0; pending: SCHED_IDLE, nice 19; failed: qos: pid 7: autogroup nice 19: EAGAIN | second"},
		{"Windows", Applied{Policy: "BELOW_NORMAL_PRIORITY_CLASS"}, "nice 0, BELOW_NORMAL_PRIORITY_CLASS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.a.String()
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "\n", "one line")
		})
	}
}
