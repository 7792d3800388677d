package main

import (
	"os"
	"testing"

	"github.com/offmain/offmain/qos"
	"go.uber.org/goleak"
)

// appEnv, set to 1, makes the test binary run the app itself (its flags
// after the binary's name), as os/exec's tests re-run their binary: the
// end-to-end test drives the very code it was built from.
const appEnv = "OFFMAIN_GUI_TEST_APP"

func TestMain(m *testing.M) {
	qos.Main() // the agents' Group helpers are this test binary re-executed
	if os.Getenv(appEnv) == "1" || os.Getenv(workerEnv) == "1" {
		main() // never returns: the app ends the process
	}
	goleak.VerifyTestMain(m)
}
