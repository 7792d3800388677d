package qos_test

import (
	"fmt"
	"os"

	"github.com/offmain/offmain/qos"
)

// The mode comes from the first place that sets one: here the profile's own
// environment, then the daemon's, then the configuration file.
func ExampleResolve() {
	profileEnv := []string{"HOME=/home/ana", "OFFMAIN_QOS=background"}
	daemonEnv := []string{"OFFMAIN_QOS=off"}
	mode, err := qos.Resolve(
		qos.EnvSource("profile work", profileEnv),
		qos.EnvSource("the daemon's environment", daemonEnv),
		qos.Source{Origin: "config key qos", Value: "utility"},
	)
	fmt.Println(mode, err)

	// A value that is not a mode is an error; the caller decides what to do.
	mode, err = qos.Resolve(qos.Source{Origin: "config key qos", Value: "fast"})
	fmt.Println(mode, "|", err)
	// Output:
	// background <nil>
	// utility | qos: unknown mode "fast" in config key qos: want one of utility, background, off
}

// A caller that builds a child's environment from an allowlist forwards the
// mode with Env, so the agents the child starts resolve the same mode.
func ExampleEnv() {
	env := []string{"PATH=" + os.Getenv("PATH"), qos.Env(qos.ModeBackground)}
	fmt.Println(env[1])
	// Output: OFFMAIN_QOS=background
}

func ExampleDescribe() {
	fmt.Print(qos.Describe())
	// Output:
	// | Tier | Who | Linux | macOS | Windows |
	// |---|---|---|---|---|
	// | Serving | the daemon the GUI waits on | CPU unchanged and I/O best-effort 7, on every thread | disk I/O at IOPOL_UTILITY, CPU unchanged | unchanged |
	// | Agent | agent hosts and all they start | utility: nice +15 and I/O best-effort 7; background: SCHED_IDLE, nice +19 and I/O idle | utility: taskpolicy -c utility -d utility (CPU clamped to utility, disk IOPOL_UTILITY); background: taskpolicy -b (PRIO_DARWIN_BG) | utility: BELOW_NORMAL_PRIORITY_CLASS; background: IDLE_PRIORITY_CLASS |
	// | Background | one housekeeping pass on one thread | that thread, for the pass: utility: nice +19 and I/O idle; background: SCHED_IDLE, nice +19 and I/O idle | that thread at QOS_CLASS_BACKGROUND (run as DARWIN_BG) for the pass, its class restored after | THREAD_MODE_BACKGROUND_BEGIN/END |
	// Mode: OFFMAIN_QOS=utility|background|off (empty or unset: utility); off applies nothing.
}

// A housekeeping pass runs on a thread of its own at the Background tier.
func ExampleDo() {
	err := qos.Do(qos.Background, qos.ModeUtility, func() {
		fmt.Println("compacting")
	})
	fmt.Println(err)
	// Output:
	// compacting
	// <nil>
}
