package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/offmain/offmain/qos"
	"go.uber.org/goleak"
)

// testStandInEnv, set to 1, makes the test binary run StandIn, as an app's
// binary does: the Set's default agent re-executes it.
const testStandInEnv = "OFFMAIN_AGENT_TEST_STANDIN"

// testScratch prefixes the stand-in's scratch folder in these tests.
const testScratch = "agent-test-"

func TestMain(m *testing.M) {
	qos.Main() // the Group's helpers are this test binary re-executed
	if os.Getenv(testStandInEnv) == "1" {
		os.Exit(StandIn(testScratch))
	}
	// The race detector makes a process sleep 1 s at exit (atexit_sleep_ms):
	// the stand-in, this binary re-executed, would outlive the grace periods
	// that a stop gives it.
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	goleak.VerifyTestMain(m)
}
