package qos_test

import (
	"fmt"

	"github.com/offmain/offmain/qos"
)

// The mode comes from the first place that sets one: here the environment
// of the profile an agent runs in, then the app's own environment, then
// the app's configuration.
func ExampleResolveMode() {
	profileEnv := map[string]string{"HOME": "/home/ana", qos.EnvVar: "background"}
	appEnv := "off" // os.Getenv(qos.EnvVar)
	config := "utility"
	mode, from, err := qos.ResolveMode(profileEnv[qos.EnvVar], appEnv, config)
	fmt.Println(mode, from, err)

	// A value that is not a mode is an error, and from says whose it is;
	// the caller decides what to do.
	mode, from, err = qos.ResolveMode("", "", "fast")
	fmt.Println(mode, from, "|", err)
	// Output:
	// background 0 <nil>
	// utility 2 | qos: unknown mode "fast": want one of utility, background, off
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
