package main

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/offmain/offmain/examples/internal/agent"
	"github.com/offmain/offmain/qos"
)

// appEnv, set to 1, makes the test binary run the app itself, with its
// command line as the app's flags: the end-to-end test runs it under tmux.
const appEnv = "COMPOSER_TEST_APP"

func TestMain(m *testing.M) {
	qos.Main() // the agents' Group helpers are this test binary re-executed
	switch {
	case os.Getenv(workerEnv) == "1": // the default agent, re-executed by agent.Set
		os.Exit(agent.StandIn("composer-agent-"))
	case os.Getenv(appEnv) == "1":
		os.Exit(run(os.Args[1:]))
	}
	// The race detector makes a process sleep 1 s at exit (atexit_sleep_ms):
	// the stand-in agents and the app that this binary re-executes would
	// outlive the grace periods that the quit path gives them.
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	goleak.VerifyTestMain(m,
		// The cursor's blink command waits out its 530 ms in a goroutine of
		// bubbletea's, then finds the program gone and ends: owned and
		// bounded, but longer than goleak's retries.
		goleak.IgnoreTopFunction("github.com/charmbracelet/bubbles/cursor.(*Model).BlinkCmd.func1"),
	)
}
